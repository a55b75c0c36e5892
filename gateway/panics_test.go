package gateway

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// panicWord is what the caller's code that panics holds: no client sees
// it.
const panicWord = "sk-live-not-for-clients"

// panicOn is a Policy that panics on the tool call of "slow", and allows
// everything else.
type panicOn struct{}

func (panicOn) Allow(_ context.Context, _, _, kind, name string) bool {
	if kind == "tool" && name == "slow" {
		panic("the policy broke on " + panicWord)
	}
	return true
}

// TestPolicyPanicsOnSDKPath: a Policy that panics for one tool, asked
// for a call on go-sdk's handler (the session fast path off), for a
// handshake-era session and a 2026-07-28 client: the process goes on (a
// panic on go-sdk's goroutines is not recovered by net/http: unrecovered,
// it ends the test binary), the client gets a JSON-RPC internal error
// that does not echo the panic, the panic is logged at Error with its
// stack, and the client's next call is answered, in the same session.
func TestPolicyPanicsOnSDKPath(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			logs := &lockedBuffer{}
			_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{
				Policy: panicOn{}, slowPathOnly: true,
				Logger: slog.New(slog.NewTextHandler(logs, nil)),
			})
			cs := connect(t, url, v, nil)
			ctx := testCtx(t, 20*time.Second)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1}})
			if err == nil {
				t.Fatalf("the call whose Policy panicked was answered: %+v", res)
			}
			if msg := err.Error(); !strings.Contains(msg, "internal error") || strings.Contains(msg, panicWord) {
				t.Errorf("the call whose Policy panicked: %v; want an internal error that does not echo the panic", err)
			}
			l := logs.String()
			if !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "recovered from a panic") || !strings.Contains(l, "runtime/debug.Stack") {
				t.Errorf("the panic was not logged at Error with its stack:\n%.2000s", l)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
			if err != nil || !strings.Contains(texts(res), "after") {
				t.Fatalf("the next call: %v %+v", err, res)
			}
		})
	}
}

// TestCallbacksPanicOffRequests: Options.OnEvent and Options.ToolFilter
// that panic, called on the gateway's own goroutines (a server that comes
// up, its tools listed), leave the process and the gateway running: the
// event is logged, the tool the filter panicked on is left out, the
// others are served.
func TestCallbacksPanicOffRequests(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	logs := &lockedBuffer{}
	_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{
		OnEvent: func(Event) { panic("the event handler broke") },
		ToolFilter: func(_ string, tool *mcpadapter.Tool) bool {
			if tool.Name == "slow" {
				panic("the filter broke")
			}
			return true
		},
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	cs := connect(t, url, v1125, nil)
	ctx := testCtx(t, 20*time.Second)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Contains(strings.Join(names, ","), "slow") || !strings.Contains(strings.Join(names, ","), "echo") {
		t.Errorf("the tools listed: %v; want echo and not slow", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "up"}})
	if err != nil || !strings.Contains(texts(res), "up") {
		t.Fatalf("a call: %v %+v", err, res)
	}
	if l := logs.String(); !strings.Contains(l, "Options.OnEvent") || !strings.Contains(l, "Options.ToolFilter") {
		t.Errorf("the panics were not logged:\n%.2000s", l)
	}
}
