package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errCancelledByClient ends a call on the session fast path that its
// client cancelled (notifications/cancelled).
var errCancelledByClient = errors.New("the client cancelled the request")

// Why liveSessions.start refuses a call: its session is no longer live,
// go-sdk's handler has a request of the session, or a call with its id
// is in flight on the fast path.
var (
	errNotLive     = errors.New("the session is not live")
	errSDKHandling = errors.New("go-sdk's handler has a request of the session")
	errDuplicateID = errors.New("a call with this id is in flight in the session")
)

// liveSessions are the handshake-era sessions go-sdk's handler holds in
// this process, by id, for the session fast path: every session of a
// gateway without shared sessions, and with them (Options.Sessions) the
// copies this replica holds. A session is forgotten when go-sdk closes
// it: its handler tells the event store (sessionEvents, sharedEvents),
// which calls forget; nothing waits for the end of each session.
//
// They also end the sessions idle for timeout (Options.SessionTimeout;
// with shared sessions and none set, the sessions' TTL), as go-sdk's
// handler would (it is given none): a session's idle time starts when its
// last POST, on either path, has been answered. (go-sdk closes a session
// whose initialize failed; every other session is here.) Without shared
// sessions, a session holds its place under Options.MaxSessions (keep)
// until it is forgotten, listed as idle there (sessionSlot.markIdle)
// while no request of it is being served (busy): no POST, standalone
// stream or request in go-sdk's session. With shared sessions,
// sharedSessions keeps the places of the copies: no slot is kept here.
type liveSessions struct {
	timeout time.Duration // Options.SessionTimeout
	// endIdle ends a session idle for timeout and reports whether it did;
	// nil: ss.Close. With shared sessions it is sharedSessions.endIdle,
	// which ends a copy held here without a request of it finding the
	// copy closing, and leaves one a request is being served by.
	endIdle func(ss *mcp.ServerSession) bool

	mu     sync.Mutex
	closed bool
	by     map[string]*liveSession
}

// sessionEvents is the event store of the handler with sessions when
// sessions are not shared (an eventStore), which also tells the gateway
// when go-sdk closes a session. go-sdk's connection of a session calls
// SessionClosed once, when it is closed, before ServerSession.Wait
// returns.
type sessionEvents struct {
	mcp.EventStore
	closed func(sessionID string)
}

// SessionClosed drops the session's events and tells the gateway.
func (e *sessionEvents) SessionClosed(ctx context.Context, sessionID string) error {
	err := e.EventStore.SessionClosed(ctx, sessionID)
	e.closed(sessionID)
	return err
}

// sessionClosed is called when go-sdk closes the handshake-era session id
// (the event store's SessionClosed, under go-sdk's lock of the session's
// connection: it neither blocks nor calls into the session).
func (g *Gateway) sessionClosed(id string) {
	g.live.forget(id)
	g.clock.sessionClosed(id)
}

// liveSession is a session the session fast path may serve.
type liveSession struct {
	id        string
	ss        *mcp.ServerSession
	principal string // the UserID of the token its initialize came with

	// Guarded by liveSessions.mu.
	streams int                                    // standalone streams (GET) being served
	sdk     int                                    // its POSTs in go-sdk's handler, and its requests being handled there
	calls   map[jsonrpc.ID]context.CancelCauseFunc // calls on the fast path in flight
	posts   int                                    // POSTs being served
	handled int                                    // its requests being handled by go-sdk's session
	idle    *time.Timer                            // closes ss once idle for timeout; nil: never
	ended   bool                                   // its client ended it (DELETE): no request takes the fast path
	slot    *sessionSlot                           // its place under Options.MaxSessions, given back when it ends
}

// add records ss, made by principal, until go-sdk closes it (forget). Once
// the gateway is closing (shut), ss is not recorded.
func (l *liveSessions) add(ss *mcp.ServerSession, principal string) {
	id := ss.ID()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || id == "" || l.by[id] != nil {
		return
	}
	if l.by == nil {
		l.by = make(map[string]*liveSession)
	}
	ls := &liveSession{id: id, ss: ss, principal: principal}
	if l.timeout > 0 {
		end := l.endIdle
		ls.idle = time.AfterFunc(l.timeout, func() {
			if end == nil {
				_ = ss.Close()
			} else if !end(ss) {
				l.rearm(ls) // a request came as the timer fired
			}
		})
	}
	l.by[id] = ls
}

// rearm starts the idle timer of ls again, if it is still recorded and
// no POST of it is being served (whose end starts it).
func (l *liveSessions) rearm(ls *liveSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by[ls.id] == ls && ls.posts == 0 {
		ls.idle.Reset(l.timeout)
	}
}

// forget forgets session id, which go-sdk has closed, and stops its idle
// timer. Session ids are never made twice, so the id names that session.
func (l *liveSessions) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.by[id]
	if ls == nil {
		return
	}
	delete(l.by, id)
	if ls.idle != nil {
		ls.idle.Stop()
	}
	ls.slot.release()
}

// keep hands slot, taken for the request that made session id, to the
// session, which gives it back when it ends (forget), and returns the
// session claimed for it at a cap, to be ended (endEvicted); when no such
// session is recorded (none was made, or it has ended) the slot is given
// back now.
func (l *liveSessions) keep(id string, slot *sessionSlot) *evicted {
	if slot == nil {
		return nil
	}
	l.mu.Lock()
	if ls := l.by[id]; id != "" && ls != nil && ls.slot == nil {
		ls.slot = slot
		if !ls.busy() {
			slot.markIdle(ls.close)
		}
		l.mu.Unlock()
		return slot.commit()
	}
	l.mu.Unlock()
	slot.release()
	return nil
}

// post counts a POST of session id, made by principal (or by anyone,
// when no principal made the session), until the returned function is
// called: the session is not idle meanwhile.
func (l *liveSessions) post(id, principal string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.by[id]
	if ls == nil || !ls.servesFor(principal) {
		return func() {}
	}
	if ls.posts++; ls.posts == 1 && ls.idle != nil {
		ls.idle.Stop()
	}
	l.busyLocked(ls)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if ls.posts--; ls.posts == 0 && ls.idle != nil && l.by[id] == ls {
			ls.idle.Reset(l.timeout)
		}
		l.unbusyLocked(ls)
	}
}

// busy reports whether a request of ls is being served: a POST, a
// standalone stream, a request in go-sdk's session. (Guarded by
// liveSessions.mu.)
func (ls *liveSession) busy() bool {
	return ls.posts > 0 || ls.streams > 0 || ls.handled > 0
}

// close ends ls as its idle timer does: go-sdk closes it.
func (ls *liveSession) close() { _ = ls.ss.Close() }

// busyLocked takes ls, which a request of is now served, off the idle
// list of its slot; unbusyLocked lists it again once none is.
func (l *liveSessions) busyLocked(ls *liveSession) { ls.slot.markBusy() }

func (l *liveSessions) unbusyLocked(ls *liveSession) {
	if !ls.busy() && l.by[ls.id] == ls {
		ls.slot.markIdle(ls.close)
	}
}

// drop marks session id ended when principal made it, or no principal
// did (its client ended it: DELETE), so that no request of it takes the
// fast path while go-sdk closes it, and cancels its calls on the fast
// path (one that started but has not reached the receiving middleware,
// which endSession ends, included). The session stays recorded, its idle
// timer running, until it ends: go-sdk refuses some DELETEs (an
// unsupported Mcp-Protocol-Version header, say), and the session then
// goes on, served by go-sdk's handler.
func (l *liveSessions) drop(id, principal string) {
	l.mu.Lock()
	ls := l.by[id]
	if ls == nil || !ls.servesFor(principal) {
		l.mu.Unlock()
		return
	}
	ls.ended = true
	cancels := make([]context.CancelCauseFunc, 0, len(ls.calls))
	for _, c := range ls.calls {
		cancels = append(cancels, c)
	}
	l.mu.Unlock()
	for _, c := range cancels {
		c(errSessionEnded)
	}
}

// end ends session id as drop does, whoever made it: its record is gone
// from the shared session store.
func (l *liveSessions) end(id string) {
	l.mu.Lock()
	ls := l.by[id]
	l.mu.Unlock()
	if ls != nil {
		l.drop(id, ls.principal)
	}
}

// shut stops recording sessions.
func (l *liveSessions) shut() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// get returns session id, made by principal, or nil.
func (l *liveSessions) get(id, principal string) *liveSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.by[id]; ls != nil && !ls.ended && ls.principal == principal {
		return ls
	}
	return nil
}

// stream counts a standalone stream of session id, made by principal,
// until the returned function is called.
func (l *liveSessions) stream(id, principal string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.by[id]
	if ls == nil || ls.principal != principal {
		return func() {}
	}
	ls.streams++
	l.busyLocked(ls)
	return func() {
		l.mu.Lock()
		ls.streams--
		l.unbusyLocked(ls)
		l.mu.Unlock()
	}
}

// streaming reports whether ls has a standalone stream being served.
func (l *liveSessions) streaming(ls *liveSession) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ls.streams > 0
}

// start records a call with id on the fast path in ls until the returned
// function is called. It refuses (errNotLive, errSDKHandling,
// errDuplicateID) a session no longer live, one with a request in
// go-sdk's handler, and an id in flight on the fast path.
func (l *liveSessions) start(ls *liveSession, id jsonrpc.ID, cancel context.CancelCauseFunc) (done func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch _, dup := ls.calls[id]; {
	case dup:
		return nil, errDuplicateID
	case l.closed || ls.ended || l.by[ls.id] != ls:
		return nil, errNotLive
	case ls.sdk > 0:
		return nil, errSDKHandling
	}
	if ls.calls == nil {
		ls.calls = make(map[jsonrpc.ID]context.CancelCauseFunc)
	}
	ls.calls[id] = cancel
	return func() {
		l.mu.Lock()
		delete(ls.calls, id)
		l.mu.Unlock()
	}, nil
}

// toSDK counts a POST of ls holding requests (ids) that goes to go-sdk's
// handler until the returned function is called (no call of ls starts on
// the fast path meanwhile); dup is one of ids in flight on the fast path,
// if any: the POST is then refused, and release does nothing.
func (l *liveSessions) toSDK(ls *liveSession, ids []jsonrpc.ID) (release func(), dup jsonrpc.ID) {
	if len(ids) == 0 {
		return func() {}, jsonrpc.ID{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if _, inFlight := ls.calls[id]; inFlight {
			return func() {}, id
		}
	}
	ls.sdk++
	return func() {
		l.mu.Lock()
		ls.sdk--
		l.mu.Unlock()
	}, jsonrpc.ID{}
}

// handling counts a request of session id being handled by go-sdk's
// session (the receiving middleware) until the returned function is
// called: a call whose POST's stream dropped is still in flight there.
func (l *liveSessions) handling(id string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.by[id]
	if ls == nil {
		return func() {}
	}
	ls.sdk++
	ls.handled++
	l.busyLocked(ls)
	return func() {
		l.mu.Lock()
		ls.sdk--
		ls.handled--
		l.unbusyLocked(ls)
		l.mu.Unlock()
	}
}

// cancel cancels the call with id on the fast path in ls, if one is in
// flight.
func (l *liveSessions) cancel(ls *liveSession, id jsonrpc.ID) {
	l.mu.Lock()
	cancel := ls.calls[id]
	l.mu.Unlock()
	if cancel != nil {
		cancel(errCancelledByClient)
	}
}

// calling reports whether ls has calls on the fast path in flight.
func (l *liveSessions) calling(ls *liveSession) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(ls.calls) > 0
}

// servesFor reports whether go-sdk's handler serves ls to principal: a
// session made without a principal is served to anyone.
func (ls *liveSession) servesFor(principal string) bool {
	return ls.principal == "" || ls.principal == principal
}
