package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Request names one request to a server, for errors and logs, and
// bounds it.
type Request struct {
	Op      string        // the method, such as "tools/call"
	Tool    string        // the tool called, or ""
	Timeout time.Duration // zero: no limit beyond the caller's context
	// Attempt, if set, is given each attempt's wire record before the
	// attempt is made; the record keeps the raw result of the response.
	Attempt func(*wire.RequestStatus)
}

// Send runs fn on the live session, connecting first if needed. It is the
// one way every request reaches a server.
//
// A request that certainly never reached the server (the write failed, the
// HTTP connection could not be made, the server answered this very
// request with 404 for an expired session) is retried once; a request the
// server may have seen is never sent twice. A lost connection is dropped,
// so the next request reconnects; over HTTP it is retired instead, and
// the requests in flight on it get their own answers. Errors from the server (JSON-RPC errors)
// are returned as they are; everything else becomes a *TransportError.
func (e *Engine) Send(ctx context.Context, r Request, fn func(context.Context, *Session) error) error {
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.Timeout, fmt.Errorf("no answer within %v (ClientOptions.Timeout): %w", r.Timeout, context.DeadlineExceeded))
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		s, err := e.Session(ctx)
		if err != nil {
			return err
		}
		rctx, rec := wire.TrackRequest(ctx)
		if r.Attempt != nil {
			rec.KeepResult(r.Op)
			r.Attempt(rec)
		}
		err = s.run(rctx, rec, fn)
		rec.Done()
		if err == nil {
			return nil
		}
		retry, err := e.failed(ctx, s, r, err, rec.Status() == 404)
		if !retry || attempt > 0 {
			return err
		}
		e.cfg.Log.Debug("request not delivered; retrying", "op", r.Op, "cause", wire.RedactURLSecrets(err.Error()))
	}
}

// failed sorts out a failed request: it drops a lost connection and says
// whether the request may be sent again (it certainly never reached the
// server), and returns the error to report. got404 says the request's own
// HTTP POST was answered with 404.
func (e *Engine) failed(ctx context.Context, s *Session, r Request, err error, got404 bool) (retry bool, _ error) {
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		if cause == ctx.Err() {
			cause = fmt.Errorf("%w (%v)", cause, err)
		}
		return false, e.TransportError(s, r.Op, r.Tool, cause)
	}
	if s.life.Err() != nil {
		// Another request found the connection dead and closed it. A
		// request that certainly never reached the server (its own POST
		// answered 404: the session had expired) goes again on a new one.
		if neverSent(err, got404) {
			return true, e.TransportError(s, r.Op, r.Tool, err)
		}
		// Otherwise say how the server ended, when we know.
		if s.stdio != nil {
			if rerr := s.stdio.ReadError(); rerr != nil {
				return false, e.TransportError(s, r.Op, r.Tool, rerr)
			}
		}
		return false, e.TransportError(s, r.Op, r.Tool, fmt.Errorf("%w: the connection was closed while the request was in flight", mcp.ErrConnectionClosed))
	}
	if sdkerr.IsServerError(err) {
		return false, err
	}
	notSent := neverSent(err, got404)
	// A write that failed on a stdio pipe means the process is gone.
	lost := s.ended() || (notSent && s.stdio != nil) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing)
	switch {
	case lost && s.stdio == nil:
		// Over HTTP the requests in flight get their own answers rather
		// than being cancelled by this one's news: go-sdk fails its own
		// with its connection (a 404 to a request's own POST proves it was
		// not run, and it goes again), and a fast-path call's POST is
		// answered by the server whatever became of go-sdk's connection.
		e.expire(s)
	case lost:
		e.drop(s)
	}
	return notSent, e.TransportError(s, r.Op, r.Tool, err)
}

// neverSent reports whether the failed request err certainly never
// reached the server, so that it may be sent again; got404 says its own
// HTTP POST was answered with 404.
func neverSent(err error, got404 bool) bool {
	// ErrSessionMissing also fails calls whose own POST was accepted
	// (go-sdk fails the whole connection on any 404): only a 404 to this
	// request's POST proves the server did not run it.
	expired := errors.Is(err, mcp.ErrSessionMissing) && got404
	// A call handed over by the fast path, or one whose earlier round the
	// server answered, was sent whatever go-sdk says.
	var delivered *sdkerr.DeliveredError
	if errors.As(err, &delivered) {
		return false
	}
	return sdkerr.WasNotSent(err) || expired || errors.Is(err, errClosedBeforeSend)
}
