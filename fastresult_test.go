package mcpadapter

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzPlainResult: wherever the fast path's decoder takes a tool result,
// the Result it makes is the one go-sdk's decoder (what go-sdk's CallTool
// uses) makes, converted the same way; and the shapes the fast path
// exists for are taken.
func FuzzPlainResult(f *testing.F) {
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
		fast, ok := plaincall.DecodeResult(b, nil)
		if !ok {
			return
		}
		// The memo's answer, first decoded then copied, is the same, and
		// shares nothing with the one it keeps.
		var memo plaincall.MetaMemo
		for range 2 {
			again, _ := plaincall.DecodeResult(b, &memo)
			if !reflect.DeepEqual(again, fast) {
				t.Fatalf("%s: with the memo %+v, without %+v", b, again, fast)
			}
			if again.Meta != nil {
				again.Meta["mutated"] = true
			}
		}
		sdk := new(mcp.CallToolResult)
		if err := sdk.UnmarshalJSON(b); err != nil {
			t.Fatalf("the fast path took %s, which go-sdk refuses: %v", b, err)
		}
		// A result the fast path takes is no task (taskReply skips it).
		if _, _, isTask, _ := taskCreated(b); isTask {
			t.Fatalf("the fast path took %s, a task", b)
		}
		if fast.NeedsInput() != sdk.NeedsInput() || !reflect.DeepEqual(fast.Meta, sdk.Meta) {
			t.Fatalf("%s: fast %+v, go-sdk %+v", b, fast, sdk)
		}
		want, werr := convertResult("s", "t", &callReply{CallToolResult: sdk, raw: engine.SentResult(b)})
		got, gerr := convertResult("s", "t", &callReply{CallToolResult: fast, raw: engine.SentResult(b)})
		if !reflect.DeepEqual(got, want) || !sameError(gerr, werr) {
			t.Fatalf("%s:\nfast   %#v, %v\ngo-sdk %#v, %v", b, got, gerr, want, werr)
		}
	})
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}
