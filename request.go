package mcpadapter

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sendCall sends one tools/call, with tc's _meta and progress routing,
// bounded by tc's time limits, else timeout (zero: none; see
// callDeadline), once a call slot is free. The reply
// knows the result as the server wrote it, when the wire layer saw it.
func (c *Client) sendCall(ctx context.Context, tc *toolCall, params *mcp.CallToolParams, timeout time.Duration) (*callReply, error) {
	release, err := c.callSlot(ctx, params.Name)
	if err != nil {
		return nil, err
	}
	defer release()
	if tc.meta != nil {
		params.Meta = tc.meta
	}
	// The call's time limits (timeout.go) start once it has a slot.
	ctx, progress, stop := c.callDeadline(ctx, tc, timeout)
	defer stop()
	defer c.withProgress(params, progress)()
	var rec *wire.RequestStatus
	var reply *callReply
	var undecodable error
	r := engine.Request{Op: "tools/call", Tool: params.Name, Attempt: func(r *wire.RequestStatus) { rec = r }}
	call := engine.Call{Params: params, ViaSDK: tc.viaSDK}
	err = c.eng.Send(ctx, r, func(ctx context.Context, s *engine.Session) error {
		res, sent, err := s.CallTool(ctx, call)
		var raw engine.Raw = rec
		if sent != nil {
			raw = sent
		}
		// A result go-sdk could not decode was delivered: not a
		// transport failure, and never to be sent again.
		reply, undecodable, err = replyOf(res, raw, err)
		return err
	})
	if err == nil && undecodable != nil {
		return nil, &ContentError{Server: c.name, Tool: params.Name, Index: -1, Err: undecodable}
	}
	return reply, err
}

// callSlot waits for one of the tool-call slots of
// ClientOptions.MaxConcurrentCalls and returns its release. A call whose
// context ends while it waits is a *TransportError that wraps the
// context's cause and was never sent.
func (c *Client) callSlot(ctx context.Context, tool string) (release func(), _ error) {
	if c.slots == nil {
		return func() {}, nil
	}
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	default:
	}
	c.log.Debug("tool call waits for a free slot", "tool", tool, "maxConcurrentCalls", cap(c.slots))
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	case <-ctx.Done():
		return nil, c.transportError(nil, "tools/call", tool, fmt.Errorf("not sent: still waiting for one of the %d call slots (ClientOptions.MaxConcurrentCalls) when the call ended: %w", cap(c.slots), context.Cause(ctx)))
	}
}
