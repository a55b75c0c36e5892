package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// A request to a server is recorded in flight on one of its connections
// (fly), and sent only while the server is there: one that waited for its
// connection while Reload removed the server, or the gateway closed, is
// not sent (gone), and the shared client is closed again after every
// request that raced that (closeAgain), since a client connects anew on a
// request.

// fly records a request of o's in flight on a connection to the server,
// for attribution (lane.go), and returns that connection's client; leave
// ends it. On a handshake-era server it runs on the shared connection
// when it may start there at once, else (with anyConn) on an extra
// connection where it may (pool.go), else it waits until the shared
// connection or an extra one takes it.
func (u *upstream) fly(ctx context.Context, o *origin, anyConn bool) (_ *mcpadapter.Client, leave func(), _ error) {
	c, leave, err := u.board(ctx, o, anyConn)
	if err != nil {
		return nil, nil, err
	}
	// A request that waited for its connection while Reload removed the
	// server (or the gateway closed) is not sent: its client would
	// connect anew (a stdio server's process started again).
	if err := u.gone(); err != nil {
		leave()
		return nil, nil, err
	}
	if c == u.client && !u.isModern() {
		// The principal's own connection is asked for the server's log
		// messages too (the pool readies its own connections).
		u.ready.ready(ctx, c)
	}
	return c, leave, nil
}

// board is fly without its check that the server is still there.
func (u *upstream) board(ctx context.Context, o *origin, anyConn bool) (_ *mcpadapter.Client, leave func(), _ error) {
	f := newFlight(ctx, o)
	if u.isModern() {
		// A 2026-07-28 server's questions come back in its results:
		// the lane only attributes its log messages.
		f.asker = false
		u.lane.mu.Lock()
		u.lane.flights[f] = struct{}{}
		u.lane.mu.Unlock()
		return u.client, u.leaveShared(func() { u.lane.leave(f) }), nil
	}
	if !u.lane.tryEnter(f) {
		if !anyConn {
			if err := u.lane.enter(ctx, f); err != nil {
				return nil, nil, err
			}
			return u.client, u.leaveShared(lateLeave(ctx, func() { u.lane.leave(f) })), nil
		}
		// Waiting on the shared connection, f takes an extra one as
		// soon as one may take it.
		wake := u.pool.changed()
		c := u.pool.enter(ctx, f)
		if c == nil {
			onLane, err := u.lane.enterOr(ctx, f, wake, func() (bool, <-chan struct{}) {
				wake := u.pool.changed()
				c = u.pool.enter(ctx, f)
				return c != nil, wake
			})
			if err != nil {
				return nil, nil, err
			}
			if onLane {
				c = nil
			}
		}
		if c != nil {
			return c.client, lateLeave(ctx, func() { u.pool.leave(c, f) }), nil
		}
	}
	return u.client, u.leaveShared(lateLeave(ctx, func() { u.lane.leave(f) })), nil
}

// leaveShared returns leave, which ends a request on the shared
// connection, closing the client again when the server was closed
// meanwhile (closed).
func (u *upstream) leaveShared(leave func()) func() {
	return func() {
		leave()
		u.closeAgain()
	}
}

// closeAgain closes the server's client once more when the server was
// closed for good (closed): a request made on it meanwhile may have
// connected it anew. Every request on the shared client ends with it.
func (u *upstream) closeAgain() {
	if u.closed.Load() {
		_ = u.client.Close()
	}
}

// errGone is why a request is not sent to a server closed for good.
var errGone = errors.New("removed or replaced by Reload, or the gateway closed")

// gone returns the error of a request to u when u was closed for good
// (Reload removed it, or the gateway closed), else nil.
func (u *upstream) gone() error {
	if u.closed.Load() {
		return &unavailableError{server: u.name, err: errGone}
	}
	return nil
}

// lateQuiet is how long a handshake-era request that ended with its
// context (cancelled, or out of time) stays in flight on its connection
// after: the server may not have seen the cancel yet, and its questions
// and log messages for the request, sent meanwhile, must find it there,
// not the next client's call.
const lateQuiet = time.Second

// lateLeave returns leave, which ends a request made with ctx, to be
// called once the request returns: when ctx has ended by then, leave runs
// lateQuiet later.
func lateLeave(ctx context.Context, leave func()) func() {
	return func() {
		if ctx.Err() == nil {
			leave()
			return
		}
		time.AfterFunc(lateQuiet, leave)
	}
}
