package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scriptedLogClient returns a Client of peer (fast path on or off) whose
// LogHandler takes handlerDelay per message, and what it has handled.
func scriptedLogClient(t *testing.T, peer *testserver.ScriptedHTTP, disableFast bool, handlerDelay time.Duration) (*mcpadapter.Client, func(string) bool) {
	t.Helper()
	var mu sync.Mutex
	logged := map[string]bool{}
	c, err := mcpadapter.NewClient(peer.URL, &mcpadapter.ClientOptions{
		DisableFastPath: disableFast,
		Logger:          quietLogger(),
		LogHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			time.Sleep(handlerDelay)
			mu.Lock()
			logged[fmt.Sprint(req.Params.Data)] = true
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"warm"}`), realCall); err != nil || res.Text() != "warm" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	return c, func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return logged[s]
	}
}

// scriptedAnswer is the answer event's data of a scripted call.
const scriptedAnswer = `{"jsonrpc":"2.0","id":` + testserver.ScriptedIDMark + `,"result":{"content":[{"type":"text","text":"done"}]}}`

// TestNotificationsBeforeAnswerInAnyEventFormReachCallbacks: a log message
// a server sends on a call's event stream before its answer has been
// handled when the call returns, whatever legal form the event takes as
// go-sdk reads it: its JSON spread over several data lines (go-sdk joins
// them), an event ended by a line of carriage returns (a blank line to
// go-sdk), CRLF line ends, a comment and an id before it.
func TestNotificationsBeforeAnswerInAnyEventFormReachCallbacks(t *testing.T) {
	t.Parallel()
	note := func(text string) string {
		return `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + text + `"}}`
	}
	forms := map[string]func(text string) []testserver.SSEEvent{
		"one data line": func(text string) []testserver.SSEEvent {
			return []testserver.SSEEvent{{Data: note(text)}}
		},
		"data over two lines": func(text string) []testserver.SSEEvent {
			return []testserver.SSEEvent{{Data: `{"jsonrpc":"2.0","method":"notifications/message",` + "\n" +
				`"params":{"level":"info","data":"` + text + `"}}`}}
		},
		"event ended by CR CR LF": func(text string) []testserver.SSEEvent {
			return []testserver.SSEEvent{{Raw: "data: " + note(text) + "\n\r\r\n"}}
		},
		"comment, id, CRLF": func(text string) []testserver.SSEEvent {
			return []testserver.SSEEvent{{Raw: ": hi\r\nid: 7\r\nevent: message\r\ndata: " + note(text) + "\r\n\r\n"}}
		},
	}
	peer := testserver.StartScriptedHTTP(t, testserver.Legacy, false)
	for _, disable := range []bool{false, true} {
		c, logged := scriptedLogClient(t, peer, disable, 50*time.Millisecond)
		for name, form := range forms {
			t.Run(fmt.Sprintf("%s/fastpath=%v", name, !disable), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				for i := range 5 {
					text := fmt.Sprintf("%s %v %d", name, disable, i)
					events := append(form(text), testserver.SSEEvent{Data: scriptedAnswer})
					res, err := c.CallTool(ctx, testserver.ScriptedTool,
						testserver.HTTPScriptArgs(testserver.HTTPScript{Events: events}), realCall)
					if err != nil || res.Text() != "done" {
						t.Fatalf("call %d: %v %+v", i, err, res)
					}
					if !logged(text) {
						t.Errorf("call %d returned before its log message %q was handled", i, text)
					}
				}
			})
		}
	}
}

// TestStrayAnswerAfterCallHoldsNoLaterCall: a server that, on a call's
// stream after its answer, sends a notification and then another answer
// (which no one reads: the call has its answer) holds no later call of
// the connection back: a call with no notification of its own returns
// as soon as it is answered.
func TestStrayAnswerAfterCallHoldsNoLaterCall(t *testing.T) {
	t.Parallel()
	peer := testserver.StartScriptedHTTP(t, testserver.Legacy, false)
	stray := `{"jsonrpc":"2.0","id":424242,"result":{"content":[]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}`
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("fastpath=%v", !disable), func(t *testing.T) {
			c, _ := scriptedLogClient(t, peer, disable, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			events := []testserver.SSEEvent{{Data: scriptedAnswer}, {Data: note}, {Data: stray}}
			res, err := c.CallTool(ctx, testserver.ScriptedTool, testserver.HTTPScriptArgs(testserver.HTTPScript{Events: events}), realCall)
			if err != nil || res.Text() != "done" {
				t.Fatalf("scripted call: %v %+v", err, res)
			}
			time.Sleep(100 * time.Millisecond) // the rest of the stream is read
			for i := range 3 {
				start := time.Now()
				if res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"x"}`), realCall); err != nil || res.Text() != "x" {
					t.Fatalf("echo: %v %+v", err, res)
				}
				if d := time.Since(start); d > 500*time.Millisecond {
					t.Errorf("echo %d after the stray answer took %v; it sent no notification", i, d)
				}
			}
		})
	}
}

// TestNotificationBeforeResumedAnswerReachesCallback: a log message sent
// on a call's stream, which then ends before the answer, has been handled
// when the call returns with the answer go-sdk resumes the stream for
// (a GET with Last-Event-ID).
func TestNotificationBeforeResumedAnswerReachesCallback(t *testing.T) {
	t.Parallel()
	peer := testserver.StartScriptedHTTP(t, testserver.Legacy, false)
	c, logged := scriptedLogClient(t, peer, true, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		text := fmt.Sprintf("resumed %d", i)
		note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + text + `"}}`
		s := testserver.HTTPScript{
			Events: []testserver.SSEEvent{{ID: fmt.Sprintf("r%d-1", i), Retry: 10, Data: note}},
			Resume: &testserver.HTTPScript{Events: []testserver.SSEEvent{{ID: fmt.Sprintf("r%d-2", i), Data: scriptedAnswer}}},
		}
		res, err := c.CallTool(ctx, testserver.ScriptedTool, testserver.HTTPScriptArgs(s), realCall)
		if err != nil || res.Text() != "done" {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		if !logged(text) {
			t.Errorf("call %d returned before its log message was handled", i)
		}
	}
}
