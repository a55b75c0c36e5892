package mcpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// timeoutOf returns the *TimeoutError in err, or fails.
func timeoutOf(t *testing.T, err error) *mcpadapter.TimeoutError {
	t.Helper()
	var te *mcpadapter.TimeoutError
	var tre *mcpadapter.TransportError
	if !errors.As(err, &te) || !errors.As(err, &tre) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want a *TransportError with a *TimeoutError", err)
	}
	return te
}

// TestCallTimeouts checks each limit of a tool call against the test
// server's slow and progress tools: the error says which limit fired.
// The progress tool reports a step every 10ms; 200 steps take 2s or more.
func TestCallTimeouts(t *testing.T) {
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	// ClientOptions.Timeout, then CallOptions.Timeout over it.
	_, err = c.CallTool(ctx, "slow", []byte(`{"ms":20000}`), nil)
	if te := timeoutOf(t, err); te.Kind != mcpadapter.TimeoutRequest || te.Setting != "ClientOptions.Timeout" || te.Limit != time.Second {
		t.Errorf("ClientOptions.Timeout: got %+v", te)
	}
	_, err = c.CallTool(ctx, "slow", []byte(`{"ms":20000}`), &mcpadapter.CallOptions{Timeout: 100 * time.Millisecond})
	if te := timeoutOf(t, err); te.Kind != mcpadapter.TimeoutRequest || te.Setting != "CallOptions.Timeout" {
		t.Errorf("CallOptions.Timeout: got %+v", te)
	}

	// Without reset, a call that keeps reporting progress still ends.
	steps := []byte(`{"steps":200}`)
	_, err = c.CallTool(ctx, "progress", steps, nil)
	if te := timeoutOf(t, err); te.Kind != mcpadapter.TimeoutRequest {
		t.Errorf("progress without reset: got %+v", te)
	}
	// With reset, it runs to its end.
	var seen int
	res, err := c.CallTool(ctx, "progress", steps, &mcpadapter.CallOptions{ResetTimeoutOnProgress: true, Progress: func(mcpadapter.Progress) { seen++ }})
	if err != nil || res.Text() != "done" {
		t.Fatalf("progress with reset: %v, %v", res, err)
	}
	if seen == 0 {
		t.Error("the call's own Progress got nothing")
	}
	// The overall maximum ends it anyway.
	_, err = c.CallTool(ctx, "progress", steps, &mcpadapter.CallOptions{ResetTimeoutOnProgress: true, MaxTotalTimeout: 300 * time.Millisecond})
	if te := timeoutOf(t, err); te.Kind != mcpadapter.TimeoutTotal || te.Setting != "CallOptions.MaxTotalTimeout" || te.Progress == 0 {
		t.Errorf("MaxTotalTimeout: got %+v", te)
	}
	// A silent server with reset on: the no-progress limit.
	_, err = c.CallTool(ctx, "slow", []byte(`{"ms":20000}`), &mcpadapter.CallOptions{ResetTimeoutOnProgress: true, Timeout: 200 * time.Millisecond})
	if te := timeoutOf(t, err); te.Kind != mcpadapter.TimeoutNoProgress || !strings.Contains(err.Error(), "no progress") {
		t.Errorf("no progress: got %+v (%v)", te, err)
	}
	// The connection stays usable.
	if res, err := c.CallTool(ctx, "echo", []byte(`{"text":"still here"}`), nil); err != nil || res.Text() != "still here" {
		t.Fatalf("after the timeouts: %v, %v", res, err)
	}
}

// TestConfigTimeouts checks a config file's per-server and per-tool
// timeouts: "timeout" of a tool bounds that tool only, and the server's
// "resetTimeoutOnProgress" and "maxTotalTimeout" apply to its calls.
func TestConfigTimeouts(t *testing.T) {
	ctx := testCtx(t)
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}))
	cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers":{"s":{
		"url": %q, "timeout": "1s", "resetTimeoutOnProgress": true, "maxTotalTimeout": "30s",
		"tools": {"slow": {"timeout": "150ms"}}
	}}}`, url)))
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = toolByName(t, tools, "slow").Call(ctx, []byte(`{"ms":20000}`))
	if te := timeoutOf(t, err); te.Limit != 150*time.Millisecond || !strings.Contains(te.Setting, "tools.<name>.timeout") {
		t.Errorf("tool timeout: got %+v", te)
	}
	// The server's timeout restarts on progress: 2s of steps pass.
	if res, err := toolByName(t, tools, "progress").Call(ctx, []byte(`{"steps":200}`)); err != nil || res.Text() != "done" {
		t.Fatalf("progress: %v, %v", res, err)
	}

	for _, bad := range []string{
		`{"mcpServers":{"s":{"url":"http://127.0.0.1:1/mcp","tools":{"slow":{"timeout":"-1s"}}}}}`,
		`{"mcpServers":{"s":{"url":"http://127.0.0.1:1/mcp","maxTotalTimeout":true}}}`,
		`{"mcpServers":{"s":{"url":"http://127.0.0.1:1/mcp","resetTimeoutOnProgress":"yes"}}}`,
	} {
		if _, err := mcpadapter.ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "mcpServers.s.") {
			t.Errorf("%s: got %v; want an error naming the member", bad, err)
		}
	}
}

// TestResetTimeoutOnProgressStdio checks a timeout that restarts on
// progress over stdio, in both eras, with no Progress handler of the
// caller's: the call must still ask the server for progress (a call
// without a progress token would take the stdio fast path), so it runs to
// its end.
func TestResetTimeoutOnProgressStdio(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			c, err := mcpadapter.NewClient(stdioServer(t, "-era", e.era.String()), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A plain call first, so a 2026-07-28 connection has
			// learnt what the fast path sends.
			if _, err := c.CallTool(ctx, "echo", []byte(`{"text":"x"}`), nil); err != nil {
				t.Fatal(err)
			}
			// 200 steps of 10ms: 2s or more, over the 1s limit that
			// restarts on every step (a limit well above the step, so
			// that a loaded machine's stall is no timeout).
			res, err := c.CallTool(ctx, "progress", []byte(`{"steps":200}`), &mcpadapter.CallOptions{Timeout: time.Second, ResetTimeoutOnProgress: true})
			if err != nil || res.Text() != "done" {
				t.Fatalf("progress with reset: %v, %v", res, err)
			}
		})
	}
}

// ClientOptions.Timeout does not bound the time a parked call waits for a
// person.
func TestTimeoutSparesParkedCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
		mcp.AddTool(srv, &mcp.Tool{Name: "book"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "How many?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "booked " + r.Action}}}, nil, nil
		})
		c, _ := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Timeout: 300 * time.Millisecond})
		a, _ := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
		defer a.Close()
		tools, err := a.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tools[0].Call(ctx, nil)
		var ir *mcpadapter.InputRequiredError
		if !errors.As(err, &ir) {
			t.Fatalf("want an interrupt, got %v", err)
		}
		time.Sleep(time.Second) // the person thinks longer than the request timeout
		res, err := tools[0].Resume(ctx, ir.Pending, &elicitation.Resume{Responses: map[string]elicitation.Response{
			ir.Pending.Requests[0].Key: {Action: elicitation.Accept, Content: map[string]any{"n": 2}}}})
		if err != nil || res.Text() != "booked accept" {
			t.Fatalf("resume: %v %+v", err, res)
		}
	})
}
