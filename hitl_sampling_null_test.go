package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRoundSamplingNullMessage: a 2026-07-28 server answers a call of an
// ElicitInterrupt adapter (the adapter's own rounds, not go-sdk's loop)
// with input_required asking for sampling whose messages include a null. The
// call ends with an error for the model or the caller; nothing panics and
// the SamplingHandler (a model, billed per request) is not called with
// the malformed request.
func TestRoundSamplingNullMessage(t *testing.T) {
	t.Parallel()
	for _, msgs := range []string{`[null]`, `[{"role":"user","content":[{"type":"text","text":"hi"}]},null]`} {
		t.Run(msgs, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hostileServer(testserver.Modern)
			var asked atomic.Int32
			mcp.AddTool(srv, &mcp.Tool{Name: "think"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				if asked.Add(1) > 1 {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil, nil
				}
				//lint:ignore SA1019 servers may still ask for sampling in a round
				var p mcp.CreateMessageWithToolsParams
				if err := json.Unmarshal([]byte(`{"maxTokens":10,"messages":`+msgs+`}`), &p); err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &p}, RequestState: "again"}, nil, nil
			})
			var sampled atomic.Int32
			c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{
				//lint:ignore SA1019 servers may still ask for sampling in a round
				SamplingHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					sampled.Add(1)
					//lint:ignore SA1019 servers may still ask for sampling in a round
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := hitlTools(t, c, nil)["think"].Call(ctx, json.RawMessage(`{}`))
			if asked.Load() == 0 {
				t.Fatalf("the server was never asked: %v %v", res, err)
			}
			var ir *mcpadapter.InputRequiredError
			if errors.As(err, &ir) {
				t.Fatalf("the application is asked: %+v", ir.Pending.Requests)
			}
			if err == nil && !res.IsError {
				t.Fatalf("the call succeeded on a malformed sampling request: %+v", res)
			}
			if n := sampled.Load(); n != 0 {
				t.Errorf("the SamplingHandler was called %d times with a malformed request", n)
			}
		})
	}
}
