//go:build unix

package stdio_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callLine returns a RoundTrip builder of a tools/call of tool with args.
func callLine(tool, args string) func([]byte, int64) []byte {
	return func(b []byte, id int64) []byte {
		return append(b, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`...)
	}
}

// RoundTrip gets its own answer past go-sdk, on a connection go-sdk keeps
// using; a call whose context ends tells the server; calls in flight when
// the connection closes, and calls after, fail as go-sdk's would.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &recorder{}
	cs, conn := connect(t, ctx, &stdio.Transport{Observer: rec}, "-era", "legacy")

	resp, err := conn.RoundTrip(ctx, "tools/call", callLine("echo", `{"text":"direct"}`))
	if err != nil || !strings.Contains(string(resp.Result), `"text":"direct"`) {
		t.Fatalf("RoundTrip: %v, %s", err, resp.Result)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "via go-sdk"}}); err != nil || res.Content[0].(*mcp.TextContent).Text != "via go-sdk" {
		t.Fatalf("go-sdk's call on the same connection: %v", err)
	}

	cctx, ccancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = conn.RoundTrip(cctx, "tools/call", callLine("slow", `{"ms":5000}`))
	ccancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call past its deadline: %v", err)
	}
	cancelled := func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, m := range rec.sent {
			if r, ok := m.(*jsonrpc.Request); ok && r.Method == "notifications/cancelled" && strings.Contains(string(r.Params), `"requestId":1000000000000`) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); !cancelled() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !cancelled() {
		t.Error("no notifications/cancelled was sent for the abandoned call")
	}

	errc := make(chan error, 1)
	go func() {
		_, err := conn.RoundTrip(ctx, "tools/call", callLine("slow", `{"ms":5000}`))
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	_ = conn.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, mcp.ErrConnectionClosed) {
			t.Errorf("a call in flight when the connection closed: %v, want ErrConnectionClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call in flight was not ended by Close")
	}
	_, err = conn.RoundTrip(ctx, "tools/call", callLine("echo", `{"text":"late"}`))
	var we *stdio.WriteError
	if !errors.As(err, &we) {
		t.Errorf("a call after Close: %v, want a *WriteError (never sent)", err)
	}
}

// A request larger than the pipe holds is written part without waiting
// and the rest the waiting way, bounded by the call's deadline or not;
// the small requests around it, which go whole without waiting, and go-sdk's
// own writes keep working (no deadline left behind).
func TestRoundTripLargeRequests(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, conn := connect(t, ctx, &stdio.Transport{}, "-era", "legacy")
	big := strings.Repeat("x", 1<<20) // 16 pipe buffers
	for i, size := range []int{10, len(big), 10, len(big), 10} {
		text := big[:size]
		cctx := ctx // a deadline on the waiting write
		if i == 1 {
			cctx = context.Background() // none, and nothing to watch
		}
		resp, err := conn.RoundTrip(cctx, "tools/call", callLine("echo", `{"text":"`+text+`"}`))
		if err != nil || !strings.Contains(string(resp.Result), `"text":"`+text+`"`) {
			t.Fatalf("call %d (%d bytes of text): %v", i, size, err)
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "via go-sdk"}}); err != nil || res.Content[0].(*mcp.TextContent).Text != "via go-sdk" {
			t.Fatalf("go-sdk's call after call %d: %v", i, err)
		}
	}
}
