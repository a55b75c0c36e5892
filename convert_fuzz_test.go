package mcpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawResult is a tool result as the server wrote it (an engine.Raw).
type rawResult json.RawMessage

func (r rawResult) Result() (json.RawMessage, bool) { return json.RawMessage(r), true }

func FuzzConvertResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":1}}]}`,
		`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":true}`,
		`{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}`,
		`{"content":[{"type":"resource_link","uri":"test://a","name":"a","size":3}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"test://b","text":"x"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"test://b","blob":"AAE="}}],"structuredContent":{"a":[1,2]}}`,
		`{"content":[],"structuredContent":42}`,
		`{"content":[{"type":"resource"}]}`,
		`{"content":[{"type":"image"}]}`,
		`{"content":null}`,
		`{"resultType":"input_required","inputRequests":{}}`,
		// Kept verbatim: member order and numbers beyond float64.
		`{"content":[{"type":"text","text":"precise"}],"structuredContent":{"z":1,"id":12345678901234567890,"a":9007199254740993}}`,
		`{"structuredContent": [ 1.50, -0e0 , "\u00e9" ] ,"content":[]}`,
		// Blocks of types this version does not know.
		`{"content":[{"type":"text","text":"a hologram follows"},{"type":"hologram","frames":[{"n":12345678901234567890}],"_meta":{"vendor":"test"}}]}`,
		`{"content":[{"type":"hologram"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"smell","annotations":{"priority":2}}],"isError":true}`,
		`{"content":[{"type":"tool_use","id":"u1","name":"x","input":{}}]}`,
		`{"content":[{"type":"tool_result","toolUseId":"u1","content":[{"type":"hologram"}]}]}`,
		`{"content":[{"text":"no type"}]}`,
		`{"content":[{"type":""},{"type":"x"}]}`,
		`{"content":[{"type":7}]}`,
		`{"content":[{"type":"x"}],"structuredContent":{"b":1,"a":2},"_meta":{"m":true}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r mcp.CallToolResult
		reply, undecodable, err := engine.ReplyOf(&r, rawResult(data), json.Unmarshal(data, &r))
		if err != nil {
			return // go-sdk refused the result for another reason
		}
		if undecodable != nil {
			if undecodable.Error() == "" {
				t.Fatal("an empty reason for an undecodable result")
			}
			return
		}
		res, err := convertResult("srv", "tool", reply)
		if err != nil {
			var ce *ContentError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ContentError", err)
			}
			if !strings.Contains(err.Error(), `"srv"`) || !strings.Contains(err.Error(), `"tool"`) {
				t.Fatalf("error %q does not name the server and tool", err)
			}
			return
		}
		if content, ok := wire.Member(data, "content"); ok {
			var blocks []json.RawMessage
			if json.Unmarshal(content, &blocks) == nil && len(res.Content) != len(blocks) {
				t.Fatalf("converted %d blocks, want %d", len(res.Content), len(blocks))
			}
		}
		for i, c := range res.Content {
			if u, ok := c.(*UnknownContent); ok && (u.Type == "" || !json.Valid(u.Raw) || u.Kind() != u.Type) {
				t.Fatalf("content[%d]: unknown block %+v", i, u)
			}
		}
		if (reply.StructuredContent != nil) != (res.Artifact != nil) {
			t.Fatalf("artifact presence %v, structured content presence %v", res.Artifact != nil, reply.StructuredContent != nil)
		}
		if res.Artifact != nil {
			sc := res.Artifact.StructuredContent
			if !json.Valid(sc) {
				t.Fatalf("artifact is not JSON: %q", sc)
			}
			if sent, ok := wire.Member(data, "structuredContent"); ok && !bytes.Equal(sc, sent) {
				t.Fatalf("artifact %s, the server sent %s", sc, sent)
			}
		}
		_ = res.Text()
	})
}

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
		want, werr := convertResult("s", "t", &callReply{CallToolResult: sdk, Raw: engine.SentResult(b)})
		got, gerr := convertResult("s", "t", &callReply{CallToolResult: fast, Raw: engine.SentResult(b)})
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
