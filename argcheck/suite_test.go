package argcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suiteSkips are the suite's cases the checker deliberately does not pass,
// by "file: case description": each needs a document it does not load (a
// remote $ref or the meta-schema) or a keyword it does not assert, and in
// each the checker accepts a value the suite would refuse (never the
// reverse).
var suiteSkips = map[string]string{
	"draft2020-12/ref.json: remote ref, containing refs itself: remote ref invalid":                                                             "the meta-schema is a remote document",
	"draft7/ref.json: remote ref, containing refs itself: remote ref invalid":                                                                   "the meta-schema is a remote document",
	"draft7/definitions.json: validate definition against metaschema: invalid definition schema":                                                "the meta-schema is a remote document",
	"draft2020-12/not.json: collect annotations inside a 'not', even if collection is disabled: annotations are still collected inside a 'not'": "unevaluatedProperties is not asserted",
	"draft2020-12/ref.json: ref creates new scope when adjacent to keywords: referenced subschema doesn't see annotations from properties":      "unevaluatedProperties is not asserted",
}

// TestSuite runs the official JSON Schema Test Suite's cases for the
// keywords the checker asserts.
func TestSuite(t *testing.T) {
	total, failed, skipped := 0, 0, 0
	for _, dir := range []string{"draft2020-12", "draft7"} {
		files, err := filepath.Glob(filepath.Join("testdata", "JSON-Schema-Test-Suite", dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no suite files in %s: %v", dir, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var groups []struct {
				Description string          `json:"description"`
				Schema      json.RawMessage `json:"schema"`
				Tests       []struct {
					Description string          `json:"description"`
					Data        json.RawMessage `json:"data"`
					Valid       bool            `json:"valid"`
				} `json:"tests"`
			}
			if err := json.Unmarshal(data, &groups); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			name := dir + "/" + filepath.Base(f)
			for _, g := range groups {
				schema := g.Schema
				if dir == "draft7" && !strings.Contains(string(schema), "$schema") && strings.HasPrefix(strings.TrimSpace(string(schema)), "{") {
					schema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#",` + strings.TrimPrefix(strings.TrimSpace(string(schema)), "{"))
					if strings.TrimSpace(string(g.Schema)) == "{}" {
						schema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#"}`)
					}
				}
				s, err := Compile(schema)
				if err != nil {
					t.Errorf("%s: %s: compile: %v", name, g.Description, err)
					continue
				}
				for _, c := range g.Tests {
					total++
					key := name + ": " + g.Description + ": " + c.Description
					if _, ok := suiteSkips[key]; ok {
						skipped++
						continue
					}
					err := s.Validate(c.Data)
					if got := err == nil; got != c.Valid {
						failed++
						t.Errorf("%s: valid=%v, want %v (%v)\nschema %s\ndata %s", key, got, c.Valid, err, g.Schema, c.Data)
					}
				}
			}
		}
	}
	if len(suiteSkips) != skipped {
		t.Errorf("%d skips listed, %d used: a listed case was renamed or removed", len(suiteSkips), skipped)
	}
	t.Logf("suite: %d cases, %d failed, %d skipped (listed in suiteSkips)", total, failed, skipped)
}
