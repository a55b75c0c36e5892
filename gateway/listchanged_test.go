package gateway

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListChangedReachesClients: a server that adds a tool tells the
// gateway, which tells its clients of both eras (a handshake-era session's
// notification, a 2026-07-28 client's subscriptions/listen stream); the
// new tool is listed and callable, and a removed one is refused.
func TestListChangedReachesClients(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Modern, testserver.Legacy} {
		t.Run(era.String(), func(t *testing.T) {
			srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: era, Mutable: true}), func(o *mcp.StreamableHTTPOptions) { o.Stateless = era == testserver.Modern })
			_, url := startGateway(t, []Server{{Name: "m", Target: srv.URL}}, nil)
			var handshake, modern atomic.Int32
			a := connect(t, url, v1125, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { handshake.Add(1) }})
			b := connect(t, url, v0728, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { modern.Add(1) }})
			ctx := testCtx(t, 30*time.Second)
			// Give b's subscription stream a moment to open.
			time.Sleep(200 * time.Millisecond)
			if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "tool_add", Arguments: map[string]any{"name": "fresh"}}); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for handshake.Load() == 0 || modern.Load() == 0 || !contains(toolNames(t, b), "fresh") {
				if time.Now().After(deadline) {
					t.Fatalf("list_changed: handshake %d, 2026-07-28 %d; tools %v", handshake.Load(), modern.Load(), toolNames(t, b))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "fresh", Arguments: map[string]any{}}); err != nil || texts(res) != "fresh: {}" {
				t.Fatalf("fresh: %q, %v", texts(res), err)
			}
			if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "tool_remove", Arguments: map[string]any{"name": "fresh"}}); err != nil {
				t.Fatal(err)
			}
			for contains(toolNames(t, a), "fresh") {
				if time.Now().After(deadline) {
					t.Fatal("the removed tool is still listed")
				}
				time.Sleep(20 * time.Millisecond)
			}
			_, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "fresh", Arguments: map[string]any{}})
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a removed tool: %v", err)
			}
		})
	}
}
