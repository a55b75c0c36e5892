package plaincall

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzAppendCall: the request AppendCall writes is one line of valid JSON
// that says what it was given: the id, tools/call, the name, the
// arguments (one object) and the _meta.
func FuzzAppendCall(f *testing.F) {
	f.Add(int64(100_000_000_000_001), "echo", []byte(`{"text":"hi"}`), []byte(`{"k":1}`))
	f.Add(int64(7), "a \"quoted\"\nname é", []byte("{\n  \"a\": [1,\n 2]\r\n}"), []byte(nil))
	f.Add(int64(1), "", []byte(``), []byte(nil))
	f.Fuzz(func(t *testing.T, id int64, name string, args, meta []byte) {
		args = bytes.TrimSpace(args)
		if len(args) > 0 && (args[0] != '{' || !json.Valid(args)) {
			return // the caller sends one JSON object
		}
		var compact bytes.Buffer
		if meta != nil && (len(meta) == 0 || meta[0] != '{' || json.Compact(&compact, meta) != nil || !bytes.Equal(compact.Bytes(), meta)) {
			return // the caller's _meta is a compact object (json.Marshal's)
		}
		b := AppendCall(nil, id, name, args, meta)
		if bytes.ContainsAny(b, "\r\n") {
			t.Fatalf("not one line: %q", b)
		}
		var req struct {
			JSONRPC string `json:"jsonrpc"`
			ID      int64  `json:"id"`
			Method  string `json:"method"`
			Params  struct {
				Meta      json.RawMessage `json:"_meta"`
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		var gotArgs, wantArgs any
		_ = json.Unmarshal(req.Params.Arguments, &gotArgs)
		if len(args) == 0 {
			args = []byte("{}")
		}
		_ = json.Unmarshal(args, &wantArgs)
		if req.JSONRPC != "2.0" || req.ID != id || req.Method != "tools/call" || !reflect.DeepEqual(gotArgs, wantArgs) {
			t.Fatalf("%q: read back %+v", b, req)
		}
		// The name as go-sdk's encoder (json.Marshal) writes it.
		nb, _ := json.Marshal(name)
		var wantName string
		_ = json.Unmarshal(nb, &wantName)
		if req.Params.Name != wantName || (meta != nil && !bytes.Equal(req.Params.Meta, meta)) || (meta == nil && req.Params.Meta != nil) {
			t.Fatalf("%q: read back %+v", b, req)
		}
	})
}
