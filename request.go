package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request names one request to a server, for errors and logs, and
// bounds it.
type request struct {
	op      string        // the method, such as "tools/call"
	tool    string        // the tool called, or ""
	timeout time.Duration // zero: no limit beyond the caller's context
	// attempt, if set, is given each attempt's wire record before the
	// attempt is made; the record keeps the raw result of the response.
	attempt func(*wire.RequestStatus)
}

// request describes a request bounded by ClientOptions.Timeout.
func (c *Client) request(op, tool string) request {
	return request{op: op, tool: tool, timeout: c.opts.Timeout}
}

// send runs fn on the live session, connecting first if needed. It is the
// one way every request reaches a server.
//
// A request that certainly never reached the server (the write failed, the
// HTTP connection could not be made, the server answered this very
// request with 404 for an expired session) is retried once; a request the
// server may have seen is never sent twice. A lost connection is dropped,
// so the next request reconnects. Errors from the server (JSON-RPC errors)
// are returned as they are; everything else becomes a *TransportError.
func (c *Client) send(ctx context.Context, r request, fn func(context.Context, *session) error) error {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.timeout, fmt.Errorf("no answer within %v (ClientOptions.Timeout): %w", r.timeout, context.DeadlineExceeded))
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		s, err := c.session(ctx)
		if err != nil {
			return err
		}
		rctx, rec := wire.TrackRequest(ctx)
		if r.attempt != nil {
			rec.KeepResult(r.op)
			r.attempt(rec)
		}
		err = s.run(rctx, fn)
		rec.Done()
		if err == nil {
			return nil
		}
		retry, err := c.failed(ctx, s, r, err, rec.Status() == 404)
		if !retry || attempt > 0 {
			return err
		}
		c.log.Debug("request not delivered; retrying", "op", r.op, "cause", wire.RedactURLSecrets(err.Error()))
	}
}

// failed sorts out a failed request: it drops a lost connection and says
// whether the request may be sent again (it certainly never reached the
// server), and returns the error to report. got404 says the request's own
// HTTP POST was answered with 404.
func (c *Client) failed(ctx context.Context, s *session, r request, err error, got404 bool) (retry bool, _ error) {
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		if cause == ctx.Err() {
			cause = fmt.Errorf("%w (%v)", cause, err)
		}
		return false, c.transportError(s, r.op, r.tool, cause)
	}
	if s.life.Err() != nil {
		// Another request found the connection dead and closed it: say
		// how the server ended, when we know.
		if s.stdio != nil {
			if rerr := s.stdio.ReadError(); rerr != nil {
				return false, c.transportError(s, r.op, r.tool, rerr)
			}
		}
		return false, c.transportError(s, r.op, r.tool, fmt.Errorf("%w: the connection was closed while the request was in flight", mcp.ErrConnectionClosed))
	}
	if sdkerr.IsServerError(err) {
		return false, err
	}
	// ErrSessionMissing also fails calls whose own POST was accepted
	// (go-sdk fails the whole connection on any 404): only a 404 to this
	// request's POST proves the server did not run it.
	expired := errors.Is(err, mcp.ErrSessionMissing) && got404
	notSent := sdkerr.WasNotSent(err) || expired
	// A write that failed on a stdio pipe means the process is gone.
	lost := s.ended() || (notSent && s.stdio != nil) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing)
	if lost {
		c.drop(s)
	}
	return notSent, c.transportError(s, r.op, r.tool, err)
}

// run calls fn with a context that also ends when the session is closed.
func (s *session) run(ctx context.Context, fn func(context.Context, *session) error) error {
	s.inflight.Add(1)
	defer s.doneRequest()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	return fn(ctx, s)
}

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
	r := request{op: "tools/call", tool: params.Name, attempt: func(r *wire.RequestStatus) { rec = r }}
	err = c.send(ctx, r, func(ctx context.Context, s *session) error {
		var res *mcp.CallToolResult
		var err error
		var raw rawSource = rec
		if c.plainCall(ctx, s, tc, params) {
			var sent rawSource
			if res, sent, err = c.callFast(ctx, s, params); sent != nil {
				raw = sent
			}
		} else {
			res, err = s.cs.CallTool(ctx, params)
			c.learnFast(s, tc, params)
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
