package schemaprofile_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// fuzzSeeds are the hand-written schemas of testdata/seeds.json: the
// shapes the profiles rewrite ($ref cycles, type lists, root anyOf, bad
// property names, deep nesting, ...).
func fuzzSeeds(t testing.TB) []json.RawMessage {
	data, err := os.ReadFile("testdata/seeds.json")
	if err != nil {
		t.Fatal(err)
	}
	var seeds []json.RawMessage
	if err := json.Unmarshal(data, &seeds); err != nil {
		t.Fatal(err)
	}
	return seeds
}

// FuzzProfiles checks that no schema makes a profile panic, that every
// output is JSON its provider's validator accepts, and that Restore
// takes any JSON arguments.
func FuzzProfiles(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add([]byte(s), []byte(`{"a b":null,"opt":null,"x":[{"k":null}]}`))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		if !json.Valid(schema) {
			for _, p := range schemaprofile.Profiles() {
				if _, err := schemaprofile.Apply(p, schema); err == nil && p != schemaprofile.Verbatim {
					t.Fatalf("%s: no error for invalid JSON", p)
				}
			}
			return
		}
		for _, p := range schemaprofile.Profiles() {
			r, err := schemaprofile.Apply(p, schema)
			if err != nil {
				continue // too deep to read: an error, not a panic
			}
			if !json.Valid(r.Schema) {
				t.Fatalf("%s: output is not JSON: %s", p, r.Schema)
			}
			for _, prob := range validate(r) {
				t.Fatalf("%s: output refused: %s\ninput %s\noutput %s", p, prob, schema, r.Schema)
			}
			if json.Valid(args) {
				out, err := r.Restore(args)
				if err == nil && !json.Valid(out) {
					t.Fatalf("%s: Restore made %s", p, out)
				}
			}
		}
	})
}
