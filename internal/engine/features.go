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
	sp := order.SpanFrom(ctx)
	sp.Sent(s.order)
	res, err := s.cs.ReadResource(ctx, p)
	s.settle(ctx, sp)
	return res, err
}

// GetPrompt makes the prompts/get p on s through go-sdk, returning as
// ReadResource does.
func (s *Session) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	sp := order.SpanFrom(ctx)
	sp.Sent(s.order)
	res, err := s.cs.GetPrompt(ctx, p)
	s.settle(ctx, sp)
	return res, err
}

// Complete makes the completion/complete p on s through go-sdk,
// returning as ReadResource does.
func (s *Session) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	sp := order.SpanFrom(ctx)
	sp.Sent(s.order)
	res, err := s.cs.Complete(ctx, p)
	s.settle(ctx, sp)
	return res, err
}
