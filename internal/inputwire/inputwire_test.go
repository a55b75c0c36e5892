package inputwire

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWebPage checks that only http and https URLs with a host are put to
// a user, and that the error names the scheme, not the URL.
func TestWebPage(t *testing.T) {
	for raw, ok := range map[string]bool{
		"": true, "https://example.com/consent": true, "http://127.0.0.1:8080/": true,
		"javascript:alert(1)": false, "file:///etc/passwd": false, "data:text/html,x": false, "https:///nohost": false,
	} {
		err := WebPage(raw)
		if (err == nil) != ok {
			t.Errorf("WebPage(%q) = %v, want ok %v", raw, err, ok)
		}
		if err != nil && strings.Contains(err.Error(), "alert") {
			t.Errorf("WebPage(%q) quotes the URL: %v", raw, err)
		}
	}
}

// TestURLElicitations checks the keys of a -32042 error's elicitations:
// the elicitationId, or url-N.
func TestURLElicitations(t *testing.T) {
	keys, es := URLElicitations(json.RawMessage(`{"elicitations":[{"mode":"url","url":"https://a","elicitationId":"e1","message":"m"},{"mode":"url","url":"https://b","message":"m"}]}`))
	if len(es) != 2 || len(keys) != 2 || keys[0] != "e1" || keys[1] != "url-2" || es[1].URL != "https://b" {
		t.Fatalf("got %v, %v", keys, es)
	}
	for _, bad := range []string{`[1]`, `{"elicitations":[null]}`, `{"elicitations":[{"mode":"url","url":"https://a","message":"m"},null]}`} {
		if keys, es := URLElicitations(json.RawMessage(bad)); keys != nil || es != nil {
			t.Fatalf("bad data %s: %v, %v", bad, keys, es)
		}
	}
}

// TestSamplingBase checks that a message of one block is kept and one of
// several is refused.
func TestSamplingBase(t *testing.T) {
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	p := &mcp.CreateMessageWithToolsParams{MaxTokens: 9, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}}
	got, err := SamplingBase(p)
	if err != nil || got.MaxTokens != 9 || len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "hi" {
		t.Fatalf("got %+v, %v", got, err)
	}
	p.Messages[0].Content = append(p.Messages[0].Content, &mcp.TextContent{Text: "again"})
	if _, err := SamplingBase(p); err == nil || !strings.Contains(err.Error(), "2 content blocks") {
		t.Fatalf("two blocks: err = %v", err)
	}
	p.Messages[0].Content = p.Messages[0].Content[:1]
	p.Messages = append(p.Messages, nil)
	if got, err := SamplingBase(p); err == nil || !strings.Contains(err.Error(), "null message (messages[1])") {
		t.Fatalf("a null message: %+v, %v", got, err)
	}
	if got, err := SamplingBase(nil); err == nil {
		t.Fatalf("no parameters: %+v", got)
	}
}

// TestSleepEndsWithContext checks that Sleep returns the context's cause
// when it ends first, and that Keys are sorted.
func TestSleepEndsWithContext(t *testing.T) {
	cause := errors.New("moved on")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if err := Sleep(ctx, time.Hour); !errors.Is(err, cause) {
		t.Fatalf("Sleep = %v, want the cause", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v", err)
	}
	if got := Keys(mcp.InputRequestMap{"b": &mcp.ElicitParams{}, "a": &mcp.ElicitParams{}}); strings.Join(got, ",") != "a,b" {
		t.Fatalf("Keys = %v", got)
	}
}

// FuzzURLElicitations: whatever a server puts in a -32042 error's data,
// URLElicitations returns one key per elicitation and no nil one.
func FuzzURLElicitations(f *testing.F) {
	for _, s := range []string{`{"elicitations":[{"mode":"url","url":"https://a","elicitationId":"e1","message":"m"}]}`, `{"elicitations":[null]}`, `{"elicitations":null}`, `[1]`, `{"elicitations":[{}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, es := URLElicitations(data)
		if len(keys) != len(es) {
			t.Fatalf("%d keys for %d elicitations", len(keys), len(es))
		}
		for i, e := range es {
			if e == nil || keys[i] == "" {
				t.Fatalf("elicitation %d: %v, key %q", i, e, keys[i])
			}
		}
	})
}
