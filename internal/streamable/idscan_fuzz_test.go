package streamable

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

// translateID changes the call's id in a message, or the start of one,
// (in any form go-sdk reads as it: sameID) to go-sdk's and nothing
// else: the message decodes as before but for its id.
func FuzzTranslateID(f *testing.F) {
	from := strconv.Itoa(fuzzCallID)
	for _, s := range []string{
		`data: {"jsonrpc":"2.0","id":` + from + `,"result":{"id":` + from + `}}`,
		`{"id":` + from + `}`,
		`{"jsonrpc":"2.0","method":"x","params":{"id":` + from + `}}`,
		`data:{ "a" : [1,{"id":` + from + `}] , "id" : ` + from + ` , "result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":` + from + `1,"result":{}}`,
		`{"jsonrpc":"2.0","id":` + from + `.0,"result":{}}`,
		`{"jsonrpc":"2.0","id":` + from + `e0,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := translateID(b, from, "42")
		if bytes.Equal(out, b) {
			return
		}
		msg := bytes.TrimSpace(bytes.TrimPrefix(b, []byte("data:")))
		var before, after map[string]json.RawMessage
		if json.Unmarshal(msg, &before) != nil {
			return // only the start of a message: nothing to compare
		}
		if len(out) != len(b)-len(before["id"])+2 {
			t.Fatalf("%q became %q", b, out)
		}
		if err := json.Unmarshal(bytes.TrimSpace(bytes.TrimPrefix(out, []byte("data:"))), &after); err != nil {
			t.Fatalf("%q became %q, which does not decode: %v", b, out, err)
		}
		if !sameID(before["id"], from) || string(after["id"]) != "42" {
			t.Fatalf("%q became %q", b, out)
		}
		delete(before, "id")
		delete(after, "id")
		x, _ := json.Marshal(before)
		y, _ := json.Marshal(after)
		if !bytes.Equal(x, y) {
			t.Fatalf("%q became %q: more than the id changed", b, out)
		}
	})
}
