package schemaprofile_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/argcheck"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// TestModelPath: the path of a problem in restored arguments, named as the
// server names its arguments, maps back to the names the model saw,
// nested objects and array items included.
func TestModelPath(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"max price":{"type":"number","maximum":5},
		"filter":{"type":"object","properties":{"user id":{"type":"string"}}},
		"stops":{"type":"array","items":{"type":"object","properties":{"stop name":{"type":"string"}},"required":["stop name"]}},
		"plain":{"type":"string"}},"required":["plain"]}`)
	for _, p := range []schemaprofile.Profile{schemaprofile.Anthropic, schemaprofile.AnthropicStrict} {
		t.Run(string(p), func(t *testing.T) {
			r, err := schemaprofile.Apply(p, schema)
			if err != nil {
				t.Fatal(err)
			}
			// What a model writes against the profile's schema, with
			// three mistakes, restored and checked against the server's.
			model := `{"max_price":9,"filter":{"user_id":7},"stops":[{"stop_name":"a"},{}],"plain":"x"}`
			restored, err := r.Restore(json.RawMessage(model))
			if err != nil {
				t.Fatal(err)
			}
			s, err := argcheck.Compile(schema)
			if err != nil {
				t.Fatal(err)
			}
			var e *argcheck.Error
			if err := s.Validate(restored); !asError(err, &e) {
				t.Fatalf("restored %s: %v, want problems", restored, err)
			}
			got := map[string]bool{}
			for _, pr := range e.Problems {
				got[r.ModelPath(pr.Path)] = true
			}
			for _, want := range []string{"/max_price", "/filter/user_id", "/stops/1/stop_name"} {
				if !got[want] {
					t.Errorf("problem paths as the model names them %v lack %s (restored %s)", got, want, restored)
				}
			}
			if r.ModelPath("/plain") != "/plain" || r.ModelPath("") != "" {
				t.Errorf("an unrenamed path changed: %q %q", r.ModelPath("/plain"), r.ModelPath(""))
			}
		})
	}
}

func asError(err error, e **argcheck.Error) bool {
	x, ok := err.(*argcheck.Error)
	*e = x
	return ok
}

// FuzzModelPath: any pointer maps to a pointer with as many tokens, an
// unrenamed one to itself, under every profile, for schemas with renames
// at every level (objects, array items, anyOf branches, a recursive ref).
func FuzzModelPath(f *testing.F) {
	schema := json.RawMessage(`{"type":"object","$defs":{"node":{"type":"object","properties":{"child name":{"$ref":"#/$defs/node"}}}},
		"properties":{"a b":{"type":"array","items":{"type":"object","properties":{"c d":{"type":"string"}}}},
		"e f":{"anyOf":[{"type":"object","properties":{"g h":{"type":"string"}}},{"type":"object","properties":{"g.h":{"type":"integer"}}}]},
		"tree":{"$ref":"#/$defs/node"},"m":{"type":"object","additionalProperties":{"type":"object","properties":{"k l":{"type":"string"}}}}}}`)
	var results []*schemaprofile.Result
	for _, p := range schemaprofile.Profiles() {
		r, err := schemaprofile.Apply(p, schema)
		if err != nil {
			f.Fatal(err)
		}
		results = append(results, r)
	}
	for _, s := range []string{"", "/", "/a b/0/c d", "/e f/g h", "/e f/g.h", "/tree/child name/child name", "/m/x/k l", "/a~1b/~0", "/plain", "a b", "//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for _, r := range results {
			got := r.ModelPath(path)
			if path == "" || path[0] != '/' {
				if got != path {
					t.Fatalf("%s: %q is not a pointer, mapped to %q", r.Profile, path, got)
				}
				continue
			}
			if strings.Count(got, "/") != strings.Count(path, "/") || got[0] != '/' {
				t.Fatalf("%s: %q mapped to %q", r.Profile, path, got)
			}
		}
	})
}
