package plaincall

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzDecodeResult: wherever DecodeResult takes a tool result, go-sdk's
// decoder (what go-sdk's CallTool uses) takes it too and reads the same
// content, isError, _meta and structuredContent; what it takes has no
// member but those and resultType "complete", so it is neither a task nor
// a request for input; and the shapes the fast path exists for are taken.
func FuzzDecodeResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcptestserver","version":"1.0.0"}},"content":[{"type":"text","text":"hi"}],"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"a\nb \"q\" \\ \/ \t"},{"text":"x","type":"text"}],"isError":true}`,
		`{"content":[],"structuredContent":{"sum":3,"list":[1,2.5,-4],"ok":true,"none":null}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":null}`,
		`{"content":[{"type":"text","text":"\u00e9"}]}`,
		`{"content":[{"type":"text","text":"é ✓"}]}`,
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`,
		`{"content":[{"type":"text","text":"x"}],"content":[]}`,
		`{"Content":[{"type":"text","text":"x"}]}`,
		`{"content":[{"type":"text","text":"x"}],"resultType":"input_required","inputRequests":{}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"big":1e400}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{"n":12345678901234567890,"s":"\ud800"}}`,
		`{"isError":null}`,
		`{"task":{"taskId":"t1","status":"working"}}`,
		`{"resultType":"task","taskId":"t1","status":"working"}`,
		`{"content":[],"Task":{"taskId":"t1"}}`,
		`{"content":[],"resultType":"Task","taskId":"t1"}`,
		`{}`,
		`[]`,
		`null`,
		`"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		fast, ok := DecodeResult(b, nil)
		if !ok {
			return
		}
		// The memo's answer, first decoded then copied, is the same, and
		// shares nothing with the one it keeps.
		var memo MetaMemo
		for range 2 {
			again, _ := DecodeResult(b, &memo)
			if !reflect.DeepEqual(again, fast) {
				t.Fatalf("%s: with the memo %+v, without %+v", b, again, fast)
			}
			if again.Meta != nil {
				again.Meta["mutated"] = true
			}
		}
		sdk := new(mcp.CallToolResult)
		if err := sdk.UnmarshalJSON(b); err != nil {
			t.Fatalf("DecodeResult took %s, which go-sdk refuses: %v", b, err)
		}
		if fast.NeedsInput() || sdk.NeedsInput() || sdk.InputRequests != nil || !reflect.DeepEqual(fast.Meta, sdk.Meta) {
			t.Fatalf("%s: fast %+v, go-sdk %+v", b, fast, sdk)
		}
		if fast.IsError != sdk.IsError || (len(fast.Content) > 0 || len(sdk.Content) > 0) && !reflect.DeepEqual(fast.Content, sdk.Content) {
			t.Fatalf("%s: content: fast %#v %v, go-sdk %#v %v", b, fast.Content, fast.IsError, sdk.Content, sdk.IsError)
		}
		var want, got any
		if sdk.StructuredContent != nil {
			wb, _ := json.Marshal(sdk.StructuredContent)
			_ = json.Unmarshal(wb, &want)
		}
		if raw, ok := fast.StructuredContent.(json.RawMessage); ok {
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%s: structuredContent kept as %s: %v", b, raw, err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: structuredContent: fast %#v, go-sdk %#v", b, got, want)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(b, &members); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for k, v := range members {
			switch k {
			case "content", "isError", "structuredContent", "_meta":
			case "resultType":
				if string(v) != `"complete"` {
					t.Fatalf("%s: resultType %s taken", b, v)
				}
			default:
				t.Fatalf("%s: member %q taken", b, k)
			}
		}
	})
}

// The shapes the common servers answer with are taken.
func TestDecodeResultShapes(t *testing.T) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcptestserver","version":"1.0.0"}},"content":[{"type":"text","text":"hi"}],"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3}}`,
		`{"content":[{"type":"text","text":"line 1\nline 2"}],"isError":true}`,
	} {
		if _, ok := DecodeResult([]byte(s), nil); !ok {
			t.Errorf("not taken: %s", s)
		}
	}
}
