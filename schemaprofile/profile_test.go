package schemaprofile_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/schemacheck"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

func apply(t *testing.T, p schemaprofile.Profile, schema string) *schemaprofile.Result {
	t.Helper()
	r, err := schemaprofile.Apply(p, json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, prob := range validate(r) {
		t.Errorf("%s output refused: %s\n%s", p, prob, r.Schema)
	}
	return r
}

func rules(r *schemaprofile.Result) string {
	var s []string
	for _, c := range r.Changes {
		s = append(s, c.Rule+"@"+c.Path)
	}
	return strings.Join(s, " ")
}

func TestOpenAIStrictOptionalNullable(t *testing.T) {
	r := apply(t, schemaprofile.OpenAIStrict, `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","default":3}},"required":["city"]}`)
	if !r.Strict {
		t.Fatalf("not strict: %s", r.NotStrict)
	}
	want := `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":["integer","null"],"description":"Default: 3."}},"required":["city","days"],"additionalProperties":false}`
	if string(r.Schema) != want {
		t.Errorf("schema\n got %s\nwant %s", r.Schema, want)
	}
	if !strings.Contains(rules(r), "optional-nullable@/properties/days") {
		t.Errorf("changes: %s", rules(r))
	}
	args, err := r.Restore(json.RawMessage(`{"city":"Paris","days":null}`))
	if err != nil || string(args) != `{"city":"Paris"}` {
		t.Errorf("Restore = %s, %v; want the null dropped", args, err)
	}
}

// TestOpenAIStrictDescribesWhatItLacks: a keyword strict mode lacks goes
// into the description (the adapter enforces it before the call); only a
// recursive schema falls back to non-strict.
func TestOpenAIStrictDescribesWhatItLacks(t *testing.T) {
	r := apply(t, schemaprofile.OpenAIStrict, `{"type":"object","properties":{"q":{"type":"string","minLength":1,"maxLength":80}},"required":["q"]}`)
	if !r.Strict {
		t.Fatalf("not strict: %s", r.NotStrict)
	}
	if want := `{"type":"object","properties":{"q":{"type":"string","description":"At least 1 characters. At most 80 characters."}},"required":["q"],"additionalProperties":false}`; string(r.Schema) != want {
		t.Errorf("schema\n got %s\nwant %s", r.Schema, want)
	}
	if !strings.Contains(rules(r), "keyword-to-description@/properties/q/minLength") {
		t.Errorf("changes %s: want the minLength named", rules(r))
	}
	r = apply(t, schemaprofile.OpenAIStrict, `{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}}}`)
	if r.Strict || !strings.Contains(r.NotStrict, "recursive") {
		t.Errorf("a recursive schema: strict %v, %q", r.Strict, r.NotStrict)
	}
}

func TestGeminiInlinesAndBoundsRecursion(t *testing.T) {
	r := apply(t, schemaprofile.Gemini, `{"type":"object","properties":{"node":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"v":{"type":["string","null"]},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`)
	s := string(r.Schema)
	if strings.Contains(s, `"$ref":`) || strings.Contains(s, `"$defs":`) {
		t.Errorf("refs left: %s", s)
	}
	if !strings.Contains(s, `"nullable":true`) || !strings.Contains(rules(r), "recursion-cut") {
		t.Errorf("schema %s, changes %s", s, rules(r))
	}
}

func TestGeminiDescribesWhatItCannotKeep(t *testing.T) {
	r := apply(t, schemaprofile.Gemini, `{"type":"object","properties":{"n":{"type":"integer","enum":[1,2],"exclusiveMinimum":0},"u":{"type":"string","format":"uri"}}}`)
	s := string(r.Schema)
	for _, want := range []string{`Allowed values: [1,2].`, `exclusiveMinimum: 0.`, `Format: uri.`} {
		if !strings.Contains(s, want) {
			t.Errorf("want %q in %s", want, s)
		}
	}
}

func TestAnthropicRenamesAndRestores(t *testing.T) {
	r := apply(t, schemaprofile.Anthropic, `{"type":"object","properties":{"a b":{"type":"string"},"ok":{"type":"object","properties":{"x/y":{"type":"integer"}}}},"required":["a b"]}`)
	if !strings.Contains(string(r.Schema), `"required":["a_b"]`) {
		t.Errorf("schema %s", r.Schema)
	}
	args, err := r.Restore(json.RawMessage(`{"a_b":"v","ok":{"x_y":1}}`))
	if err != nil || string(args) != `{"a b":"v","ok":{"x/y":1}}` {
		t.Errorf("Restore = %s, %v", args, err)
	}
}

// TestAnthropicUnusedDefs: definitions nothing refers to whose property
// names Anthropic refuses are dropped (found by FuzzTools in the
// anthropic module).
func TestAnthropicUnusedDefs(t *testing.T) {
	r := apply(t, schemaprofile.Anthropic, `{"type":"object","properties":{"a":{"type":"string"}},"$defs":{"d":{"type":"object","properties":{"":{}}}}}`)
	if strings.Contains(string(r.Schema), "$defs") {
		t.Errorf("schema %s", r.Schema)
	}
	if p := schemacheck.Anthropic(r.Schema); len(p) > 0 {
		t.Errorf("schema %s: %v", r.Schema, p)
	}
}

func TestRootCombinatorFlattened(t *testing.T) {
	for _, p := range []schemaprofile.Profile{schemaprofile.OpenAI, schemaprofile.Anthropic} {
		r := apply(t, p, `{"anyOf":[{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]},{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}]}`)
		if !strings.Contains(string(r.Schema), `"properties":{"id":{"type":"string"},"name":{"type":"string"}}`) {
			t.Errorf("%s: %s", p, r.Schema)
		}
	}
}

func TestBadInput(t *testing.T) {
	_, err := schemaprofile.Apply(schemaprofile.Gemini, json.RawMessage(`{"type":`))
	var e *schemaprofile.Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "gemini") {
		t.Fatalf("err = %v", err)
	}
	_, err = schemaprofile.Apply("claude", json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), `unknown profile "claude"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := schemaprofile.Apply(schemaprofile.OpenAI, json.RawMessage(strings.Repeat("[", 300)+strings.Repeat("]", 300))); err == nil {
		t.Fatal("no error for nesting past the bound")
	}
}
