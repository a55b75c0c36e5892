package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter/gemini"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// FuzzSchema: whatever the Gemini profile writes, Schema converts into a
// genai.Schema without error or panic.
func FuzzSchema(f *testing.F) {
	for _, s := range []string{
		testserver.SchemaInput,
		`{}`, `true`, `{"type":["string","null"],"minLength":2}`,
		`{"type":"object","properties":{"a":{"type":"array","minItems":1.5}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1e400,"maxLength":99999999999999999999}}}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"type":"object","properties":{"e":{"enum":[1,"a",null]},"c":{"const":"x"},"o":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := schemaprofile.Apply(schemaprofile.Gemini, json.RawMessage(data))
		if err != nil {
			return
		}
		if _, _, err := gemini.Schema(r.Schema); err != nil {
			t.Fatalf("schema %s → profile %s: %v", data, r.Schema, err)
		}
	})
}
