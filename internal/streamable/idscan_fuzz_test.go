package streamable

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	for _, s := range []string{
		`{"jsonrpc":"2.0","\u0069d":` + from + `,"result":{}}`,
		`{"jsonrpc":"2.0","ID":` + from + `,"result":{}}`,
		`{"jsonrpc":"2.0","id":` + from + `,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","method":"roots/list","id":` + from + `}`,
		`{"jsonrpc":"2.0","id":` + from + `,"id":` + from + `,"result":{}}`,
		`{"jsonrpc":"2.0","id":42,"result":{}}`,
		`data: {"jsonrpc":"2.0","result":{},"id":42}`,
		`{"jsonrpc":"2.0","id":42,"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	// go-sdk's own decoder is the judge (sdkReadsAs): the call's answer in
	// its reading gets go-sdk's id and nothing else changes; every other
	// message is left byte for byte.
	f.Fuzz(func(t *testing.T, b []byte) {
		out := translateID(b, from, "42")
		in, o := b, out
		if bytes.HasPrefix(b, []byte("data:")) {
			if bytes.IndexByte(bytes.TrimRight(b, "\r\n"), '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0 {
				return // several lines: not one message
			}
			in, o = bytes.TrimPrefix(b, []byte("data:")), bytes.TrimPrefix(out, []byte("data:"))
		}
		if _, err := jsonrpc.DecodeMessage(in); err != nil {
			return // not a message go-sdk reads (or only its start)
		}
		sdkReadsAs(t, in, o, from, "42")
	})
}
