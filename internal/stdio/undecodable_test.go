package stdio

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var undecodableSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}`,
	`{"jsonrpc":"2.0","result":{"x":NaN},"id":"two"}`,
	`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"cut`,
	`{"jsonrpc":"2.0","id":4,"result":` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}`,
	`{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":NaN}}`,
	`{"jsonrpc":"2.0","result":{"method":"GET","x":NaN},"id":7}`,
	`{"jsonrpc":"2.0","result":{"x":Infinity}}`,
	`{"jsonrpc":"2.0","id":null,"result":{"x":NaN}}`,
	`{"jsonrpc":"2.0","id":{"a":1},"result":1}`,
	`{"id":"a\"b","result":[`,
	`{"jsonrpc":"2.0","m\u0065thod":"ping","id":1}`,
}

// Any line that starts with '{' is decoded or given a reason, never a
// panic; a request is never taken for a response; the id found in a
// response that decodes is its id.
func FuzzUndecodableLine(f *testing.F) {
	for _, s := range append(undecodableSeeds, decodeSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) == 0 || line[0] != '{' {
			return
		}
		msg, err := decodeLine(bytes.Clone(line), false)
		id, ok := lineResponseID(line)
		_ = nestingDepth(line)
		if ok && !id.IsValid() {
			t.Fatalf("%s: an invalid id taken for a response's", line)
		}
		if err != nil {
			if err.Error() == "" || msg != nil {
				t.Fatalf("%s: %#v, %q", line, msg, err)
			}
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if ok {
				t.Fatalf("%s: a request taken for a response to %v", line, id.Raw())
			}
		case *jsonrpc.Response:
			if m.ID.IsValid() && bytes.Count(line, []byte(`"id"`)) == 1 && (!ok || id != m.ID) {
				t.Fatalf("%s: found id %v (%v), want %v", line, id.Raw(), ok, m.ID.Raw())
			}
		}
	})
}
