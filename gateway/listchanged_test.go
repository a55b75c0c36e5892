package gateway

import (
	"context"
	"errors"
	"fmt"
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

// TestPromptAndResourceListChangedReachClients: a server of either era
// that adds a prompt and a resource tells the gateway (on a 2026-07-28
// server, through its subscriptions/listen stream), which tells its
// clients of both eras; the new items are listed.
func TestPromptAndResourceListChangedReachClients(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Modern, testserver.Legacy} {
		for _, v := range []string{v1125, v0728} {
			t.Run(era.String()+"/"+v, func(t *testing.T) {
				srv := testserver.New(testserver.Options{Era: era})
				addPrompt := func(name string) {
					srv.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
						return &mcp.GetPromptResult{}, nil
					})
				}
				addResource := func(name string) {
					srv.AddResource(&mcp.Resource{URI: "test://" + name, Name: name}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
						return &mcp.ReadResourceResult{}, nil
					})
				}
				// The server offers prompts and resources from the start,
				// so that it declares both capabilities.
				addPrompt("first")
				addResource("first")
				hs := testserver.StartStreamable(t, srv, func(o *mcp.StreamableHTTPOptions) { o.Stateless = era == testserver.Modern })
				_, url := startGateway(t, []Server{{Name: "m", Target: hs.URL}}, nil)
				var prompts, resources atomic.Int32
				cs := connect(t, url, v, &mcp.ClientOptions{
					PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts.Add(1) },
					ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources.Add(1) },
				})
				// Until the client is told (its own subscription may open
				// after the first change), add one more: prompts alone,
				// then resources alone (a change of one list must not
				// need a change of the other to be seen).
				for _, kind := range []struct {
					add  func(string)
					told *atomic.Int32
				}{{addPrompt, &prompts}, {addResource, &resources}} {
					deadline := time.Now().Add(20 * time.Second)
					for i := 0; kind.told.Load() == 0; i++ {
						if time.Now().After(deadline) {
							t.Fatalf("after %d changes: prompts/list_changed %d, resources/list_changed %d", i, prompts.Load(), resources.Load())
						}
						kind.add(fmt.Sprintf("fresh%d", i))
						for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end) && kind.told.Load() == 0; {
							time.Sleep(10 * time.Millisecond)
						}
					}
				}
				ctx := testCtx(t, 10*time.Second)
				pl, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				rl, err := cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var pnames, rnames []string
				for _, p := range pl.Prompts {
					pnames = append(pnames, p.Name)
				}
				for _, r := range rl.Resources {
					rnames = append(rnames, r.Name)
				}
				if !contains(pnames, "m_fresh0") && !contains(pnames, "fresh0") || !contains(rnames, "fresh0") {
					t.Fatalf("the new prompt and resource are not listed: prompts %v, resources %v", pnames, rnames)
				}
			})
		}
	}
}
