package mcpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func FuzzResolveTarget(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:8080/mcp", "https://example.com/sse", "https://example.com/sse/", "./server.py",
		"ftp://x", "", " http://a ", "http://", "http://[::1]:80/mcp", "node server.js", "HTTP://A/SSE", "\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ep, err := resolveEndpoint(s)
		if err != nil {
			var te *TargetError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TargetError", err)
			}
			return
		}
		if ep.kind != kindStreamable && ep.kind != kindSSE {
			t.Fatalf("string %q resolved to %s: a string must never start a process", s, ep.kind)
		}
		if ep.defaultName() == "" {
			t.Fatalf("empty default name for %q", s)
		}
	})
}

// rawResult is a tool result as the server wrote it (a rawSource).
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
		reply, undecodable, err := replyOf(&r, rawResult(data), json.Unmarshal(data, &r))
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

var modelNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func FuzzModelToolName(f *testing.F) {
	f.Add("weather", "get_forecast")
	f.Add("", "get-sum")
	f.Add("my.server", "tools/search")
	f.Add("", "")
	f.Add("x", strings.Repeat("é", 70))
	f.Add("", "天気")
	f.Add("", "予報")
	f.Add("srv", "get.forecast")
	f.Fuzz(func(t *testing.T, prefix, name string) {
		got := modelToolName(prefix, name)
		if !modelNameRE.MatchString(got) {
			t.Fatalf("modelToolName(%q, %q) = %q, outside [A-Za-z0-9_-]{1,64}", prefix, name, got)
		}
		if again := modelToolName(prefix, name); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		// A name that had to be changed never takes the name of the tool
		// already called what it was changed to (天気 and 予報 both
		// sanitise to "______").
		plain := []byte(name)
		for i, c := range plain {
			if !isNameByte(c) {
				plain[i] = '_'
			}
		}
		if string(plain) != name && len(plain) > 0 {
			if other := modelToolName(prefix, string(plain)); other == got {
				t.Fatalf("modelToolName(%q, %q) and modelToolName(%q, %q) are both %q", prefix, name, prefix, plain, got)
			}
		}
		if full := prefix + "_" + name; prefix != "" && modelNameRE.MatchString(full) && got != full {
			t.Fatalf("a valid name changed: %q became %q", full, got)
		}
	})
}
