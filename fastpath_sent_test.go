package mcpadapter_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// A call the server may have received is never sent again. The fast path
// POSTs a call, its answer is go-sdk's to read (a notification before the
// result), and by then go-sdk has failed the connection on a message that
// is not JSON. go-sdk refuses the handed-over call ("client is closing")
// before it takes the held response; the server has the call all the
// same, so the call fails and is not retried on a new connection.
//
// The timing is set by the peer's gates, not by luck: the call waits at
// gate "a" on the server; the bad message, on go-sdk's standalone stream,
// waits at gate "b" until then; gate "a" opens once go-sdk has closed its
// failed connection (its DELETE reached the peer). (A call answered with
// that message fails the connection the same way, but its error drops the
// session at once, which ends the other call first, or not: a race.)
func TestHTTPFastPathFailedHandOffNotResent(t *testing.T) {
	t.Parallel()
	if !mcpadapter.FastPathBuilt {
		t.Skip("a hand-over of the fast path; this build has none")
	}
	ctx := testCtx(t)
	peer := testserver.StartScriptedHTTP(t, testserver.Legacy, false)
	peer.Standalone(testserver.HTTPScript{Events: []testserver.SSEEvent{{Gate: "b", Raw: "data: not json\n\n"}}})
	c, err := mcpadapter.NewClient(peer.URL, &mcpadapter.ClientOptions{Logger: quietLogger(), Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	echoOK(t, ctx, c, "warm")

	logNote := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	answer := `{"jsonrpc":"2.0","id":` + testserver.ScriptedIDMark + `,"result":{"content":[{"type":"text","text":"a"}]}}`
	a := testserver.HTTPScript{Gate: "a", Events: []testserver.SSEEvent{{Data: logNote}, {Data: answer}}}
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, testserver.ScriptedTool, testserver.HTTPScriptArgs(a), nil)
		done <- err
	}()
	waitFor(t, peer.Reached("a"), "call a at the server")

	peer.Open("b")
	waitFor(t, peer.Deleted(), "go-sdk closing its failed connection")
	peer.Open("a")
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("call a never returned")
	}
	posts := 0
	for _, call := range peer.Calls() {
		var s testserver.HTTPScript
		var m struct {
			Params struct{ Arguments json.RawMessage } `json:"params"`
		}
		if json.Unmarshal(call.Body, &m) == nil && json.Unmarshal(m.Params.Arguments, &s) == nil && s.Gate == "a" {
			posts++
		}
	}
	if posts != 1 {
		t.Errorf("the server got call a %d times, want once (err %v)", posts, err)
	}
	if err == nil {
		t.Error("call a succeeded on a connection that failed before go-sdk took its answer")
	}
}

// waitFor waits for ch to close, at most 30 s.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30 s", what)
	}
}
