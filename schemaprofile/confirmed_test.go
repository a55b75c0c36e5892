package schemaprofile_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// TestRestoreConfirmedCases: the restore errors an outside review found,
// each with the schema shape that showed it.
func TestRestoreConfirmedCases(t *testing.T) {
	cases := []struct {
		name    string
		profile schemaprofile.Profile
		schema  string
		args    string // written against the profile's schema
		want    string // what the server gets
	}{{
		// Playwright's browser_emulate_media: an optional property that
		// already accepts null; null from the model means absent, so an
		// emulation the model did not mention is left as it is.
		name: "optional nullable", profile: schemaprofile.OpenAIStrict,
		schema: `{"type":"object","properties":{"media":{"type":["string","null"],"enum":["screen","print",null]},"colorScheme":{"type":["string","null"]}}}`,
		args:   `{"media":"print","colorScheme":null}`,
		want:   `{"media":"print"}`,
	}, {
		// Null-dropping of one anyOf branch applies to that branch only.
		name: "anyOf branch null", profile: schemaprofile.OpenAIStrict,
		schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":[]},{"type":"object","properties":{"b":{"type":["integer","null"]}},"required":["b"]}]}},"required":["v"]}`,
		args:   `{"v":{"b":null}}`,
		want:   `{"v":{"b":null}}`,
	}, {
		// A parent and its branch share one naming scope: "a b" and
		// "a_b" stay apart.
		name: "rename collision across branches", profile: schemaprofile.Anthropic,
		schema: `{"type":"object","properties":{"o":{"type":"object","properties":{"a_b":{"type":"string"}},"anyOf":[{"properties":{"a b":{"type":"integer"}}}]}}}`,
		args:   `{"o":{"a_b":"x","a_b_2":1}}`,
		want:   `{"o":{"a_b":"x","a b":1}}`,
	}, {
		// Names below a recursive $ref are mapped back at every level.
		name: "rename below recursion", profile: schemaprofile.Anthropic,
		schema: `{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"object","properties":{"x y":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}}}`,
		args:   `{"n":{"x_y":"1","kids":[{"x_y":"2","kids":[{"x_y":"3"}]}]}}`,
		want:   `{"n":{"x y":"1","kids":[{"x y":"2","kids":[{"x y":"3"}]}]}}`,
	}, {
		// A renamed required name inside a branch is renamed too.
		name: "required in a branch", profile: schemaprofile.AnthropicStrict,
		schema: `{"type":"object","properties":{"o":{"anyOf":[{"type":"object","properties":{"a b":{"type":"string"}},"required":["a b"]},{"type":"string"}]}},"required":["o"]}`,
		args:   `{"o":{"a_b":"x"}}`,
		want:   `{"o":{"a b":"x"}}`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := apply(t, c.profile, c.schema)
			got, err := r.Restore(json.RawMessage(c.args))
			if err != nil || canonical(t, got) != canonical(t, json.RawMessage(c.want)) {
				t.Errorf("schema %s\nRestore(%s) = %s, %v; want %s", r.Schema, c.args, got, err, c.want)
			}
		})
	}
}

// TestGeminiAllOfTighterBound: merging allOf keeps the tighter of two
// bounds, not the first branch's.
func TestGeminiAllOfTighterBound(t *testing.T) {
	r := apply(t, schemaprofile.Gemini, `{"type":"object","properties":{"n":{"allOf":[{"type":"integer","minimum":0},{"minimum":5}]}}}`)
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(r.Schema, &s); err != nil {
		t.Fatal(err)
	}
	if m := s.Properties["n"]["minimum"]; m != 5.0 {
		t.Errorf("minimum %v, want 5: %s", m, r.Schema)
	}
}
