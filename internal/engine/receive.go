//lint:file-ignore SA1019 roots, deprecated in 2026-07-28, live in the handshake era, which we support

package engine

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RelayMiddleware answers roots/list with roots and elicitation/create
// with elicit, each as received (go-sdk's own handling skipped); a nil
// function leaves its method to go-sdk.
func RelayMiddleware(roots func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error), elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch r := req.(type) {
			case *mcp.ListRootsRequest:
				if roots != nil && method == "roots/list" {
					return roots(ctx, r)
				}
			case *mcp.ElicitRequest:
				if elicit != nil && method == "elicitation/create" {
					return elicit(ctx, r)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// MessageMiddleware shows h every message the server sends, before it is
// handled.
func MessageMiddleware(h func(context.Context, string, mcp.Request)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			h(ctx, method, req)
			return next(ctx, method, req)
		}
	}
}
