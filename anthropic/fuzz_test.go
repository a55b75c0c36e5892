package anthropic_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/anthropic"
	"github.com/mcpadapter/mcpadapter/internal/schemacheck"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// FuzzTools: whatever schema a server sends, New either refuses it with
// an error or gives a tool whose input_schema, as the SDK marshals it, is
// the profile's output (same JSON value) and passes the Anthropic rules.
func FuzzTools(f *testing.F) {
	for _, s := range []string{
		testserver.SchemaInput, `{}`, `true`, `{"type":"string"}`,
		`{"type":"object","properties":{"a b":{"type":"string"}},"required":["a b"]}`,
		`{"anyOf":[{"type":"object","properties":{"x":{}}},{"type":"object","properties":{"y":{}}}]}`,
		`{"type":"object","required":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tool := &mcpadapter.Tool{Server: "s", Name: "t", InputSchema: json.RawMessage(data)}
		ts, err := anthropic.New([]*mcpadapter.Tool{tool}, nil)
		if err != nil {
			return
		}
		out, err := json.Marshal(ts.Tools())
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var sent []struct {
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(out, &sent); err != nil || len(sent) != 1 {
			t.Fatalf("tools %s: %v", out, err)
		}
		if p := schemacheck.Anthropic(sent[0].InputSchema); len(p) > 0 {
			t.Fatalf("input_schema %s: %v", sent[0].InputSchema, p)
		}
		if a, b := canon(t, ts.Profile("t").Schema), canon(t, sent[0].InputSchema); !bytes.Equal(a, b) {
			t.Fatalf("sent %s, profile %s", b, a)
		}
	})
}

func canon(t *testing.T, data []byte) []byte {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	out, _ := json.Marshal(v)
	return out
}
