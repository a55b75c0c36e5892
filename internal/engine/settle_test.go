package engine

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSettleForgetsEndedSessions: the engine's sessions, found by their
// go-sdk sessions for Settle, are forgotten once they end: retired (Retire)
// and idle, or closed (Close). None stays behind after 20 sessions.
func TestSettleForgetsEndedSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := New(Config{
		Name: "s", Kind: InProcess, Server: testserver.New(testserver.Options{Era: testserver.Legacy}),
		SDK:            mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil),
		ConnectTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
	})
	defer e.Close()
	count := func() int {
		n := 0
		e.bySDK.Range(func(_, _ any) bool { n++; return true })
		return n
	}
	for i := range 20 {
		s, err := e.Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.sessionOf(s.SDK()); got != s {
			t.Fatalf("session %d: Settle finds %p for its go-sdk session, want %p", i, got, s)
		}
		if i%2 == 0 {
			e.Retire()
		} else if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); count() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n != 0 {
		t.Errorf("%d ended sessions are still known to Settle", n)
	}
}

// TestSettleLeavesOwnCallsToCallTool: Settle waits for a tools/call made
// on go-sdk's session by a program that took it, and leaves one the
// engine sends itself (Send, through Session.CallTool, on go-sdk's path)
// to Session.CallTool's own wait: that call is waited for once.
func TestSettleLeavesOwnCallsToCallTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var e *Engine
	var calls, waits atomic.Int32 // the tools/calls Settle saw, and waited for
	sdk := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	sdk.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				calls.Add(1)
				if settles(ctx, method) {
					waits.Add(1)
				}
			}
			return e.Settle(ctx, method, req, next)
		}
	})
	e = New(Config{
		Name: "s", Kind: InProcess, Server: testserver.New(testserver.Options{Era: testserver.Legacy}),
		SDK:            sdk,
		ConnectTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
	})
	defer e.Close()
	params := func() *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}
	}
	err := e.Send(ctx, Request{Op: "tools/call", Tool: "echo"}, func(ctx context.Context, s *Session) error {
		_, _, err := s.CallTool(ctx, Call{Params: params(), ViaSDK: true})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if c, w := calls.Load(), waits.Load(); c != 1 || w != 0 {
		t.Fatalf("the engine's own call: Settle saw %d tools/calls and waited for %d, want 1 and 0", c, w)
	}
	s, err := e.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SDK().CallTool(ctx, params()); err != nil {
		t.Fatal(err)
	}
	if c, w := calls.Load(), waits.Load(); c != 2 || w != 1 {
		t.Fatalf("a call made on go-sdk's session: Settle saw %d tools/calls and waited for %d, want 2 and 1", c, w)
	}
}
