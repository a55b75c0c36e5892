package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/order"
)

// A handshake-era server's requests (elicitation/create,
// sampling/createMessage, roots/list) and log messages do not say which
// call they are for. The lane of such a server keeps them attributable:
//
//   - a call from a client that can be asked (an "asker") runs only while
//     every call in flight on the server comes from the same client (the
//     same key: a handshake-era session, or one 2026-07-28 request);
//   - a call from a client that cannot be asked runs beside any calls of
//     its own key and beside other such calls, but not beside an asker of
//     another key;
//   - calls start in the order they came, except that a call starts at
//     once when it may run beside every call in flight and every call
//     that came before it and still waits: so no client keeps another
//     waiting by keeping calls of its own in flight.
//
// A request from the server then belongs to the askers in flight (all of
// one key), or, with no asker, to the only call in flight; it goes to the
// client on the request of one of them, and lives on while a call of that
// key is in flight (whileFlying, origin.askSession). Calls to
// 2026-07-28 servers, whose questions come back in their own results, do
// not use the lane.
//
// Each connection to a server has a lane of its own (pool.go): a call
// that may not start on the shared connection goes to another connection
// of the server where it may, opened for it when the pool has room, and
// past the pool's bound waits until the shared connection or an extra
// one may take it (enterOr).

// flight is one forwarded request in flight on a server.
type flight struct {
	o     *origin
	asker bool
	// conn is the principal whose connection of the server's client the
	// request runs on (its CallIdentity: a server whose credential is
	// per principal), "" for the connection of no one's.
	conn string
	// span, from the request's context (order.WithSpan), says where the
	// request stood in its connection's messages (nil: not known).
	span *order.Span
	// streams, from the request's context (order.WithStreams), are the
	// request's event streams over streamable HTTP: a log message read
	// on one of them is the request's (nil: not known).
	streams *order.Streams
	// until, once the request left while notifications read before its
	// answer were still to be handled, is the connection's place after
	// its answer: the request trails (lane.trailing) until it is passed.
	until order.Spot
}

// newFlight returns the flight of a request of o made with ctx (its
// CallIdentity names the connection it runs on; its order.Span, if any,
// where it stands in the connection's messages).
func newFlight(ctx context.Context, o *origin) *flight {
	return &flight{o: o, asker: o.asker(), conn: connOf(ctx), span: order.SpanFrom(ctx), streams: order.StreamsFrom(ctx)}
}

// placed returns ctx carrying the order.Span and order.Streams in which
// the client's session notes where a request made with it stands in its
// connection's messages, for the request's flight (newFlight).
func placed(ctx context.Context) context.Context {
	return order.WithStreams(order.WithSpan(ctx, new(order.Span)), new(order.Streams))
}

// mayHaveSent reports whether the request of f may have been in flight at
// the server when it sent the notification at place at (order.Spot) on
// f's connection conn: not when the request was not sent yet, or sent
// on another connection (such as one made anew after the notification's
// ended) or after the notification was read, nor, once f trails, when
// the notification was read after its answer.
func (f *flight) mayHaveSent(conn string, at order.Spot) bool {
	if f.conn != conn {
		return false
	}
	sent, _ := f.span.Places()
	if f.span != nil && sent == (order.Spot{}) {
		return false // not sent yet (it waits for a call slot, or its connection)
	}
	if at.Before(sent) || at.Apart(sent) {
		return false
	}
	return f.until == (order.Spot{}) || at.Before(f.until)
}

// connOf returns the principal whose connection a request made with ctx
// runs on, or whose connection a server's request handled with ctx came
// on (go-sdk's handlers of a principal's connection see its identity):
// "" for the connection of no one's.
func connOf(ctx context.Context) string {
	if id := mcpadapter.CallIdentityFrom(ctx); id != nil {
		return id.Principal
	}
	return ""
}

// conflicts reports whether a and b may not run side by side.
func conflicts(a, b *flight) bool {
	return a.o.key != b.o.key && (a.asker || b.asker)
}

type lane struct {
	mu      sync.Mutex
	flights map[*flight]struct{}
	// trailing are requests that left (their callers have their answers)
	// while notifications read before their answers were still to be
	// handled: such a notification (a log message held up by a client
	// that does not read its stream) is still theirs, never a later
	// request's. A request trails until those notifications have been
	// handled, or its connection ended; past maxTrailing the oldest stops
	// trailing, and the notifications read before its answer (lost) are
	// no one's.
	trailing []*flight
	lost     order.Spot
	queue    []*flight     // waiting, first come first
	changed  chan struct{} // made for a waiting call, closed (and dropped) on the next change
	// watched has, for each key a question was put to (whileFlying), the
	// context that ends when no call of the key is in flight.
	watched map[string]watchedKey
}

type watchedKey struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newLane() *lane {
	return &lane{flights: make(map[*flight]struct{}), watched: make(map[string]watchedKey)}
}

// signal wakes the calls waiting for a change (l.changed). l.mu is held.
func (l *lane) signal() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// admits reports whether f, waiting in l.queue, may start now. l.mu is
// held.
func (l *lane) admits(f *flight) bool {
	for g := range l.flights {
		if conflicts(f, g) {
			return false
		}
	}
	for _, g := range l.queue {
		if g == f {
			break
		}
		if conflicts(f, g) {
			return false
		}
	}
	return true
}

// enter waits until f may start, then records it in flight; the caller
// must call leave. It fails only when ctx ends.
func (l *lane) enter(ctx context.Context, f *flight) error {
	_, err := l.enterOr(ctx, f, nil, nil) // a nil wake never comes
	return err
}

// enterOr is enter for a call that may also run elsewhere: while f
// waits, each time wake is closed it tries other (l.mu not held), which
// reports whether it took f elsewhere and the next wake. When it did, f
// leaves l's queue and enterOr reports false; true means f is in flight
// on l.
func (l *lane) enterOr(ctx context.Context, f *flight, wake <-chan struct{}, other func() (bool, <-chan struct{})) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, f)
	defer func() {
		l.queue = slices.DeleteFunc(l.queue, func(g *flight) bool { return g == f })
		l.signal()
	}()
	for !l.admits(f) {
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-wake:
			var took bool
			if took, wake = other(); took {
				l.mu.Lock()
				return false, nil
			}
		case <-ctx.Done():
			l.mu.Lock()
			return false, context.Cause(ctx)
		}
		l.mu.Lock()
	}
	l.flights[f] = struct{}{}
	return true, nil
}

// tryEnter records f in flight if it may start at once (beside every call
// in flight and every call still waiting), and reports whether it did.
func (l *lane) tryEnter(f *flight) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.admits(f) {
		return false
	}
	l.flights[f] = struct{}{}
	l.signal()
	return true
}

// idle reports whether no call is in flight on l or waits for it.
func (l *lane) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.flights) == 0 && len(l.queue) == 0
}

func (l *lane) leave(f *flight) {
	l.mu.Lock()
	delete(l.flights, f)
	l.trail(f)
	if w, ok := l.watched[f.o.key]; ok && !l.flying(f.o.key) {
		delete(l.watched, f.o.key)
		w.cancel(errNoCallInFlight)
	}
	l.signal()
	l.mu.Unlock()
}

// flying reports whether a call of key is in flight on l. l.mu is held.
func (l *lane) flying(key string) bool {
	for f := range l.flights {
		if f.o.key == key {
			return true
		}
	}
	return false
}

// errNoCallInFlight ends a server's question (whileFlying) once no call
// of the client it was put to is in flight on the connection.
var errNoCallInFlight = errors.New("no call of the client asked is in flight on the server's connection any more")

// whileFlying returns a context that ends (errNoCallInFlight) once no
// call of key is in flight on l, ended already when none is: a server's
// question attributed to key belongs to one of those calls.
func (l *lane) whileFlying(key string) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.watched[key]; ok {
		return w.ctx
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	if !l.flying(key) {
		cancel(errNoCallInFlight)
		return ctx
	}
	l.watched[key] = watchedKey{ctx, cancel}
	return ctx
}

// errUnattributable is why a server's request was refused: the gateway
// cannot tell which client it is for.
var errUnattributable = errors.New("the gateway cannot tell which client this request is for")

// attribute returns the origin a server's request, which came on the
// connection of conn (connOf), belongs to, or why there is none. Only the
// requests in flight on that connection count: the connections of a
// server whose credential is per principal share the lane of their
// client, and a question on one principal's is never another's. Of the
// askers in flight (all of one key: one client's), one whose request is
// still open is taken first, so that the question travels on a stream
// that is still there.
func (l *lane) attribute(conn string) (*origin, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var only, ended *flight
	n := 0
	for f := range l.flights {
		if f.conn != conn {
			continue
		}
		if f.asker {
			// Askers in flight all have one key. The question goes on
			// the request of one that has not ended, when there is one
			// (a call cancelled a moment ago stays in flight: lateQuiet).
			if f.o.live() {
				return f.o, nil
			}
			ended = f
			continue
		}
		only = f
		n++
	}
	switch {
	case ended != nil:
		return ended.o, nil
	case n == 0:
		return nil, fmt.Errorf("%w: no client request is in flight", errUnattributable)
	case n == 1:
		return only.o, nil
	}
	return nil, fmt.Errorf("%w: %d requests of clients that cannot be asked are in flight", errUnattributable, n)
}

// attributeLog returns the origin a log message, which came on the
// connection of conn at the place at (order.HandlingFrom; zero when not
// known), belongs to. One read on a request's own event stream (st,
// order.StreamFrom; streamable HTTP) belongs to that request when it is
// in flight on that connection or trails, and to no one otherwise (a
// request of the gateway's own, such as a listing). Any other (read on
// the standalone stream, or over a transport without a stream per
// request) belongs to the requests that may have been in flight when the
// server sent it (in flight on that connection, or trailing, and not sent
// after it was read) when they all have one key, else to no one (nil).
func (l *lane) attributeLog(conn string, at order.Spot, st order.Stream) *origin {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune()
	if !st.IsZero() {
		for f := range l.flights {
			if f.conn == conn && f.streams.Carried(st) {
				return f.o
			}
		}
		for _, f := range l.trailing {
			if f.conn == conn && f.streams.Carried(st) {
				return f.o
			}
		}
		return nil
	}
	if at.Before(l.lost) {
		return nil
	}
	var o *origin
	for f := range l.flights {
		switch {
		case !f.mayHaveSent(conn, at):
		case o == nil:
			o = f.o
		case o.key != f.o.key:
			return nil
		}
	}
	for _, f := range l.trailing {
		switch {
		case !f.mayHaveSent(conn, at):
		case o == nil:
			o = f.o
		case o.key != f.o.key:
			return nil
		}
	}
	return o
}

// maxTrailing bounds a lane's trailing requests.
const maxTrailing = 1024

// trail keeps f, which left, trailing while notifications read before
// its answer are still to be handled. l.mu is held.
func (l *lane) trail(f *flight) {
	l.prune()
	_, answered := f.span.Places()
	if answered.Passed() {
		return
	}
	f.until = answered
	if len(l.trailing) == maxTrailing {
		if old := l.trailing[0].until; l.lost.Passed() || l.lost.Before(old) {
			l.lost = old
		}
		l.trailing[0] = nil
		l.trailing = l.trailing[1:]
	}
	l.trailing = append(l.trailing, f)
}

// prune ends the trailing of requests whose connections have handled
// every notification read before their answers. l.mu is held.
func (l *lane) prune() {
	l.trailing = slices.DeleteFunc(l.trailing, func(f *flight) bool { return f.until.Passed() })
	if len(l.trailing) == 0 {
		l.trailing = nil
	}
}
