//lint:file-ignore SA1019 roots, deprecated in 2026-07-28, live in the handshake era, which we support

package engine

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRelayMiddleware(t *testing.T) {
	var nexts []string
	next := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		nexts = append(nexts, method)
		return nil, nil
	}
	roots := func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///r"}}}, nil
	}
	elicit := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	ctx := context.Background()
	h := RelayMiddleware(roots, elicit)(next)
	if res, _ := h(ctx, "roots/list", &mcp.ListRootsRequest{}); res == nil || len(res.(*mcp.ListRootsResult).Roots) != 1 {
		t.Errorf("roots/list: %#v, want the roots handler's result", res)
	}
	if res, _ := h(ctx, "elicitation/create", &mcp.ElicitRequest{}); res == nil || res.(*mcp.ElicitResult).Action != "accept" {
		t.Errorf("elicitation/create: %#v, want the elicitation handler's result", res)
	}
	if len(nexts) != 0 {
		t.Errorf("go-sdk handled %v; want nothing", nexts)
	}
	h = RelayMiddleware(roots, nil)(next)
	if _, _ = h(ctx, "elicitation/create", &mcp.ElicitRequest{}); len(nexts) != 1 {
		t.Errorf("with no elicitation handler, go-sdk handled %v; want elicitation/create", nexts)
	}
}

func TestMessageMiddleware(t *testing.T) {
	var seen, handled []string
	h := MessageMiddleware(func(_ context.Context, method string, _ mcp.Request) { seen = append(seen, method) })(
		func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
			if len(seen) != len(handled)+1 {
				t.Errorf("%s handled before the message handler saw it", method)
			}
			handled = append(handled, method)
			return nil, nil
		})
	for _, m := range []string{"ping", "notifications/message"} {
		_, _ = h(context.Background(), m, nil)
	}
	if len(seen) != 2 || len(handled) != 2 {
		t.Errorf("seen %v, handled %v; want both messages each", seen, handled)
	}
}
