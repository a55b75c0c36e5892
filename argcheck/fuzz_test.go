package argcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzValidate: no input makes Compile or Validate panic, and where
// google/jsonschema-go (go-sdk's validator, an independent
// implementation) reads the schema and the checker ignores nothing, the
// two agree on every value.
func FuzzValidate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "JSON-Schema-Test-Suite", "draft2020-12", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var groups []struct {
			Schema json.RawMessage `json:"schema"`
			Tests  []struct {
				Data json.RawMessage `json:"data"`
			} `json:"tests"`
		}
		if json.Unmarshal(data, &groups) != nil {
			continue
		}
		for _, g := range groups {
			for _, c := range g.Tests {
				f.Add(string(g.Schema), string(c.Data))
			}
		}
	}
	f.Add(`{"type":"object","properties":{"a":{"type":"integer","multipleOf":0.5}}}`, `{"a":1e400}`)
	f.Add(`{"$ref":"#"}`, `{}`)
	f.Fuzz(func(t *testing.T, schema, data string) {
		s, err := Compile(json.RawMessage(schema))
		if err != nil {
			return
		}
		err = s.Validate(json.RawMessage(data))
		var e *Error
		if err != nil && !isError(err, &e) {
			return // not JSON
		}
		if e != nil {
			for _, p := range e.Problems {
				if p.Message == "" {
					t.Fatalf("empty message: %+v", p)
				}
			}
		}
		if len(s.Ignored()) > 0 || strings.Contains(schema, "format") || strings.Contains(schema, "$id") ||
			strings.Contains(schema, "$anchor") || strings.Contains(schema, "$schema") || strings.Contains(schema, "$dynamic") ||
			strings.Contains(schema, "unevaluated") || strings.Contains(schema, "\\") || strings.Contains(schema, "$ref") {
			return // out of the comparison: annotations, dialects, URIs, escapes each side reads its own way
		}
		var js jsonschema.Schema
		if json.Unmarshal([]byte(schema), &js) != nil {
			return
		}
		rs, err := js.Resolve(nil)
		if err != nil {
			return
		}
		var inst any
		if json.Unmarshal([]byte(data), &inst) != nil {
			return
		}
		theirs := rs.Validate(inst)
		if (err == nil) != (theirs == nil) && (e == nil) != (theirs == nil) {
			t.Fatalf("schema %s\ndata %s\nargcheck: %v\njsonschema-go: %v", schema, data, e, theirs)
		}
	})
}

func isError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}
