package stdio

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"result":{},"id":"abc","jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":-42,"result":[1,2,{"a":"}"}]}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
	`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[]}}`,
	`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":{"x":1}},"result":{}}`,
	`{"jsonrpc":"2.0","id":3}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e3,"result":{}}`,
	`{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
	`{"jsonrpc":"2.0","id":"é","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2\u002e0","id":1,"result":{}}`,
	`{"jsonrpc":2,"id":1,"result":{}}`,
	`{"id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","ID":1,"Result":{},"id":2}`,
	`{"jsonrpc":"2.0","i\u0064":1,"result":{}}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "result" : { "a" : [ 1 , 2 ] } } `,
	`{"jsonrpc":"2.0","id":1,"result":"\\"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"t":"a\\\"b\\\\"},"extra":[true,false,null]}`,
	`{}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
}

// decodeMessage gives what go-sdk's jsonrpc.DecodeMessage gives, for every
// valid JSON line, whether or not the line is owned.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return
		}
		want, werr := jsonrpc.DecodeMessage(line)
		for _, owned := range []bool{false, true} {
			in := bytes.Clone(line)
			got, gerr := decodeMessage(in, owned)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%s (owned %v): error %v, go-sdk's %v", line, owned, gerr, werr)
			}
			if !sameMessage(got, want) {
				t.Fatalf("%s (owned %v):\n got %#v\nwant %#v", line, owned, got, want)
			}
			if !owned && got != nil {
				// A line that is not owned is reused: the message must not
				// share its bytes.
				for i := range in {
					in[i] = '#'
				}
				if !sameMessage(got, want) {
					t.Fatalf("%s: the message shares the reader's buffer", line)
				}
			}
		}
	})
}

func TestDecodeMessageCommonShapesSkipGoSDK(t *testing.T) {
	t.Parallel()
	for _, s := range decodeSeeds[:6] {
		if decodeCommon([]byte(s), false) == nil {
			t.Errorf("%s: left to go-sdk, want decoded here", s)
		}
	}
}

func sameMessage(a, b jsonrpc.Message) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case *jsonrpc.Request:
		b, ok := b.(*jsonrpc.Request)
		return ok && a.ID == b.ID && a.Method == b.Method && bytes.Equal(a.Params, b.Params) && (a.Params == nil) == (b.Params == nil)
	case *jsonrpc.Response:
		b, ok := b.(*jsonrpc.Response)
		return ok && a.ID == b.ID && bytes.Equal(a.Result, b.Result) && (a.Result == nil) == (b.Result == nil) && reflect.DeepEqual(a.Error, b.Error)
	}
	return false
}
