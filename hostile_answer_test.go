package mcpadapter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// nullQuestion is a 2026-07-28 server's answer to a call whose question
// is null: go-sdk's decoding of it panics.
const nullQuestion = `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"inputRequests":{"q":null}}}`

// TestHostileNullQuestion: a 2026-07-28 server answers a call with a
// question that is null. The call fails with an error that says the
// answer cannot be read, on the fast path and on go-sdk's, over HTTP (in
// an event stream and as JSON) and stdio; the server gets the call once;
// the next call works.
func TestHostileNullQuestion(t *testing.T) {
	t.Parallel()
	const want = "answer to tools/call cannot be read"
	for _, jsonResponse := range []bool{false, true} {
		p := newHTTPDiffPair(t, testserver.Modern, jsonResponse)
		asJSON, asSSE := answerScripts(nullQuestion)
		s := asSSE
		if jsonResponse {
			s = asJSON
		}
		fast, sdk := p.call(t, s)
		for side, o := range map[string]httpOutcome{"fast": fast, "go-sdk": sdk} {
			if !strings.Contains(o.call.err, want) || o.posts != 1 || !strings.Contains(o.after, `"Text":"after"`) || !strings.HasSuffix(o.after, `(error "")`) {
				t.Errorf("http (json %v), %s path: error %q, %d POSTs, then echo %q", jsonResponse, side, o.call.err, o.posts, o.after)
			}
		}
	}
	for _, disable := range []bool{false, true} {
		ctx := testCtx(t)
		c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", testserver.Modern.String()}}, &mcpadapter.ClientOptions{
			Logger: quietLogger(), Timeout: 10 * time.Second, DisableFastPath: disable,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		echoOK(t, ctx, c, "first") // teaches the fast path go-sdk's _meta
		_, err = c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(nullQuestion), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("stdio (fast path off: %v): %v", disable, err)
		}
		echoOK(t, ctx, c, "after")
	}
}
