package gateway

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestShutdownLetsAnswersIn: a call in flight when Shutdown begins whose
// server then asks the client a question finishes: the client's answer
// (a handshake-era client's reply, a 2026-07-28 client's retry with its
// answers) is taken while new calls are refused.
func TestShutdownLetsAnswersIn(t *testing.T) {
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			release := make(chan struct{})
			srv := mcp.NewServer(&mcp.Implementation{Name: "asker"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
			srv.AddTool(&mcp.Tool{Name: "ask_later", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "sure?", RequestedSchema: map[string]any{"type": "object"}})
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered " + res.Action}}}, nil
			})
			g, url := startGateway(t, []Server{{Name: "s", Target: srv}}, nil)
			cs := connect(t, url, v, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			}})
			type result struct {
				text string
				err  error
			}
			done := make(chan result, 1)
			go func() {
				res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "ask_later", Arguments: map[string]any{}})
				done <- result{texts(res), err}
			}()
			waitUntil(t, "the call in flight", func() bool { return g.inflightCount() > 0 })
			shut := make(chan error, 1)
			go func() { shut <- g.Shutdown(testCtx(t, 20*time.Second)) }()
			waitUntil(t, "the shutdown", g.draining.Load)
			close(release)
			if r := <-done; r.err != nil || r.text != "answered accept" {
				t.Errorf("the call in flight: %q, %v", r.text, r.err)
			}
			if err := <-shut; err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
}

// TestCloseEndsCallsInFlight: Close does not wait for the servers' slow
// calls or for a client's answer: they are cancelled, and Close returns.
func TestCloseEndsCallsInFlight(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, nil)
	never := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	slow, asked := connect(t, url, v1125, nil), connect(t, url, v1125, never)
	errs := make(chan error, 2)
	go func() {
		_, err := slow.CallTool(testCtx(t, 60*time.Second), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 120000}})
		errs <- err
	}()
	go func() {
		_, err := asked.CallTool(testCtx(t, 60*time.Second), &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "monday"}})
		errs <- err
	}()
	waitUntil(t, "two calls in flight", func() bool { return g.inflightCount() == 2 })
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for the calls in flight")
	}
	for range 2 {
		if err := <-errs; err == nil {
			t.Error("a call in flight when the gateway closed succeeded")
		}
	}
}
