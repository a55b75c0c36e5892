package mcpadapter_test

//lint:file-ignore SA1019 logging lives in the handshake era, which these servers speak too

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nestedSessionCalls is how many book calls each cell of
// TestSessionCallInsideRoundHandlerSettles makes.
const nestedSessionCalls = 30

// TestSessionCallInsideRoundHandlerSettles: a 2026-07-28 server asks for
// input in a round of one of the Client's own calls; the
// ElicitationHandler answering it (with the call's context, as the
// Client's own loop hands it) makes a tools/call on go-sdk's session
// that Client.Session returns. That call, too, returns only once the log
// messages and progress reports its server sent before its answer have
// reached the Client's handlers, every time, over every transport.
func TestSessionCallInsideRoundHandlerSettles(t *testing.T) {
	t.Parallel()
	bin := testserver.Build(t)
	opts := testserver.Options{Era: testserver.Modern, Notify: true}
	targets := map[string]any{
		"stdio":     mcpadapter.Command{Path: bin, Args: []string{"-era", "modern", "-notify"}},
		"http":      testserver.ServeStreamable(t, testserver.New(opts), testserver.Stateless()),
		"inprocess": testserver.New(opts),
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			var seen notesSeen
			var c *mcpadapter.Client
			var asked, missed atomic.Int32
			o := seen.handlers()
			o.ElicitationHandler = func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				text := fmt.Sprintf("nested-%d", asked.Add(1))
				sess, err := c.Session(ctx)
				if err != nil {
					return nil, err
				}
				args, _ := json.Marshal(testserver.NotifyIn{Text: text, Log: true, Logs: sessionCallNotes, Progress: true, Progresses: sessionCallNotes})
				meta := mcp.Meta{"progressToken": text, mcp.MetaKeyLogLevel: "debug"}
				res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "notify", Arguments: json.RawMessage(args), Meta: meta})
				if err != nil || res.IsError {
					return nil, fmt.Errorf("the call inside the handler: %v %+v", err, res)
				}
				if !seen.all(text) {
					missed.Add(1)
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 2}}, nil
			}
			var err error
			if c, err = mcpadapter.NewClient(target, o); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := range nestedSessionCalls {
				res, err := c.CallTool(ctx, "book", json.RawMessage(`{"date":"monday"}`), nil)
				if err != nil || res.IsError {
					t.Fatalf("book %d: %v %+v", i, err, res)
				}
			}
			if a, m := asked.Load(), missed.Load(); a != nestedSessionCalls || m > 0 {
				t.Errorf("the ElicitationHandler was asked %d times (want %d); %d of its calls on Client.Session's session returned before their %d log messages and %d progress reports reached the handlers",
					a, nestedSessionCalls, m, sessionCallNotes, sessionCallNotes)
			}
		})
	}
}

// TestSessionCallInsideLogHandler: a LogHandler that makes a tools/call
// on go-sdk's session Client.Session returns (with its own context), and
// then takes its time, does not cut short the wait of the call whose log
// message it handles: that call (made on the same session) returns once
// every log message its server sent before its answer has been handled,
// over every transport and in both eras. (The handler's call cannot wait
// for the notifications read after the one being handled: they wait for
// the handler.)
func TestSessionCallInsideLogHandler(t *testing.T) {
	t.Parallel()
	const rounds, logs = 2, 2
	for name, target := range notifyTargets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			var mu sync.Mutex
			logged := map[string]int{}
			var c *mcpadapter.Client
			var nestedErr atomic.Value
			c, err := mcpadapter.NewClient(target, &mcpadapter.ClientOptions{
				Logger: quietLogger(),
				LogHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
					data := fmt.Sprint(req.Params.Data)
					if strings.HasSuffix(data, " 0") {
						sess, err := c.Session(ctx)
						if err == nil {
							_, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "inside"}})
						}
						if err != nil {
							nestedErr.Store(err)
						}
						time.Sleep(50 * time.Millisecond) // and then takes its time
					}
					mu.Lock()
					logged[data[:strings.LastIndexByte(data, ' ')]]++
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sess, modern := debugSession(ctx, t, c)
			missed := 0
			for i := range rounds {
				text := fmt.Sprintf("call-%d", i)
				args, _ := json.Marshal(testserver.NotifyIn{Text: text, Log: true, Logs: logs})
				meta := mcp.Meta{}
				if modern {
					meta[mcp.MetaKeyLogLevel] = "debug"
				}
				res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "notify", Arguments: json.RawMessage(args), Meta: meta})
				if err != nil || res.IsError {
					t.Fatalf("call %d: %v %+v", i, err, res)
				}
				mu.Lock()
				if logged[text] != logs {
					missed++
				}
				mu.Unlock()
				// The next call starts with this one's log messages handled.
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					mu.Lock()
					done := logged[text] == logs
					mu.Unlock()
					if done {
						break
					}
				}
			}
			if err, _ := nestedErr.Load().(error); err != nil {
				t.Fatalf("the LogHandler's call: %v", err)
			}
			if missed > 0 {
				t.Errorf("%d of %d calls returned before their %d log messages reached the LogHandler (which made a call on the session while handling the first)", missed, rounds, logs)
			}
		})
	}
}
