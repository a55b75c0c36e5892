package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Over stdio a call with a progress handler returns after its progress
// notifications have been handled, even with slow handlers; the barrier the
// connection uses for that reaches neither ClientOptions.ProgressHandler
// nor MessageHandler.
func TestProgressBeforeResultOverStdio(t *testing.T) {
	t.Parallel()
	const flood, calls = 200, 3
	ctx := testCtx(t)
	var global, seen atomic.Int64
	var mu sync.Mutex
	var foreign []string
	c, err := mcpadapter.NewClient(stdioServer(t, "-flood", fmt.Sprint(flood)), &mcpadapter.ClientOptions{
		Logger: quietLogger(),
		ProgressHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			global.Add(1)
			time.Sleep(100 * time.Microsecond) // a slow handler: the notifications queue up
		},
		MessageHandler: func(_ context.Context, method string, req mcp.Request) {
			if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && method == "notifications/progress" {
				seen.Add(1)
				if tok, _ := p.ProgressToken.(string); !strings.HasPrefix(tok, "mcpadapter-") || strings.Contains(tok, "barrier") {
					mu.Lock()
					foreign = append(foreign, tok)
					mu.Unlock()
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range calls {
		var mine atomic.Int64
		res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"x"}`), &mcpadapter.CallOptions{Progress: func(mcpadapter.Progress) { mine.Add(1) }})
		if err != nil || res.Text() != "x" {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		if got := mine.Load(); got != flood/2 {
			t.Errorf("call %d returned after %d of its %d progress notifications", i, got, flood/2)
		}
		if got, want := global.Load(), int64((i+1)*flood/2); got != want {
			t.Errorf("after call %d ProgressHandler saw %d, want %d", i, got, want)
		}
	}
	if got, want := seen.Load(), int64(calls*flood/2); got != want {
		t.Errorf("MessageHandler saw %d progress notifications, want %d", got, want)
	}
	if len(foreign) > 0 {
		t.Errorf("handlers saw progress tokens not of the calls: %q", foreign[:min(len(foreign), 3)])
	}
}

// A notification of a method no client knows (go-sdk drops it before any
// handler) does not hold the result of a call with a progress handler.
func TestProgressVendorNotificationDoesNotHoldResult(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-vendor-note"), &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const calls = 3
	for i := range calls {
		res, err := c.CallTool(ctx, "progress", json.RawMessage(`{"steps":1}`), &mcpadapter.CallOptions{Progress: func(mcpadapter.Progress) {}})
		if err != nil || res.Text() != "done" {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	// A result held until the connection gives up on a notification that
	// is never handled would take 2 s each.
	if d := time.Since(start); d >= calls*2*time.Second {
		t.Errorf("%d calls took %v: their results waited for the dropped notifications", calls, d)
	}
}

// A call's progress token stays routed for a second after the call ends
// (progressLinger), for notifications that come after the result over
// HTTP or in-process; later ones reach no handler. The clock is
// synctest's.
func TestProgressLinger(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		srv := testserver.New(testserver.Options{})
		sent := make(chan struct{})
		mcp.AddTool(srv, &mcp.Tool{Name: "late"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			go func() {
				defer close(sent)
				for _, at := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond} {
					time.Sleep(at)
					_ = req.Session.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(at.Milliseconds())})
				}
			}()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "returned"}}}, nil, nil
		})
		c, err := mcpadapter.NewClient(srv, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var mu sync.Mutex
		var got []float64
		res, err := c.CallTool(ctx, "late", nil, &mcpadapter.CallOptions{Progress: func(p mcpadapter.Progress) {
			mu.Lock()
			got = append(got, p.Progress)
			mu.Unlock()
		}})
		if err != nil || res.Text() != "returned" {
			t.Fatalf("%v %+v", err, res)
		}
		<-sent
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0] != 500 {
			t.Errorf("progress after the call: %v, want [500] (0.5 s after the result: routed; 2 s after: not)", got)
		}
	})
}
