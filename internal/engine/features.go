package engine

import (
	"context"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadResource makes the resources/read p on s through go-sdk. Like
// CallTool, it returns once the notifications the server sent before its
// answer have been handled, or waiting for them gave up.
func (s *Session) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return settled(ctx, s, s.cs.ReadResource, p)
}

// GetPrompt makes the prompts/get p on s through go-sdk, returning as
// ReadResource does.
func (s *Session) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return settled(ctx, s, s.cs.GetPrompt, p)
}

// Complete makes the completion/complete p on s through go-sdk,
// returning as ReadResource does.
func (s *Session) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return settled(ctx, s, s.cs.Complete, p)
}

// settled makes the request p with send on s and returns its answer once
// the notifications read before it have been handled (Session.settle).
func settled[P, R any](ctx context.Context, s *Session, send func(context.Context, P) (R, error), p P) (R, error) {
	sp := order.SpanFrom(ctx)
	sp.Sent(s.order)
	res, err := send(ctx, p)
	s.settle(ctx, sp)
	return res, err
}
