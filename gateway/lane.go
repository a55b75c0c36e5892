package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
//   - a waiting asker holds back calls of other keys, so that it is not
//     starved.
//
// A request from the server then belongs to the askers in flight (all of
// one key), or, with no asker, to the only call in flight. Calls to
// 2026-07-28 servers, whose questions come back in their own results, do
// not use the lane.

// flight is one forwarded request in flight on a server.
type flight struct {
	o     *origin
	asker bool
}

type lane struct {
	mu      sync.Mutex
	flights map[*flight]struct{}
	waiting map[string]int // askers waiting, by key
	changed chan struct{}  // closed and replaced on every change
}

func newLane() *lane {
	return &lane{flights: make(map[*flight]struct{}), waiting: make(map[string]int), changed: make(chan struct{})}
}

func (l *lane) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// admits reports whether f may start now. l.mu is held.
func (l *lane) admits(f *flight) bool {
	for g := range l.flights {
		if g.o.key == f.o.key {
			continue
		}
		if f.asker || g.asker {
			return false
		}
	}
	if !f.asker {
		for k, n := range l.waiting {
			if n > 0 && k != f.o.key {
				return false
			}
		}
	}
	return true
}

// enter waits until f may start, then records it in flight; the caller
// must call leave. It fails only when ctx ends.
func (l *lane) enter(ctx context.Context, f *flight) error {
	l.mu.Lock()
	if f.asker {
		l.waiting[f.o.key]++
		defer func() {
			l.mu.Lock()
			if l.waiting[f.o.key]--; l.waiting[f.o.key] <= 0 {
				delete(l.waiting, f.o.key)
			}
			l.signal()
			l.mu.Unlock()
		}()
	}
	for {
		if l.admits(f) {
			l.flights[f] = struct{}{}
			l.signal()
			l.mu.Unlock()
			return nil
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		l.mu.Lock()
	}
}

func (l *lane) leave(f *flight) {
	l.mu.Lock()
	delete(l.flights, f)
	l.signal()
	l.mu.Unlock()
}

// errUnattributable is why a server's request was refused: the gateway
// cannot tell which client it is for.
var errUnattributable = errors.New("the gateway cannot tell which client this request is for")

// attribute returns the origin a server's request belongs to, or why there
// is none.
func (l *lane) attribute() (*origin, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var only *flight
	n := 0
	for f := range l.flights {
		if f.asker {
			return f.o, nil // askers in flight all have one key
		}
		only = f
		n++
	}
	switch n {
	case 0:
		return nil, fmt.Errorf("%w: no client request is in flight", errUnattributable)
	case 1:
		return only.o, nil
	}
	return nil, fmt.Errorf("%w: %d requests of clients that cannot be asked are in flight", errUnattributable, n)
}

// attributeLog returns the origin a log message belongs to: that of the
// calls in flight when they all have one key, else nil.
func (l *lane) attributeLog() *origin {
	l.mu.Lock()
	defer l.mu.Unlock()
	var o *origin
	for f := range l.flights {
		switch {
		case o == nil:
			o = f.o
		case o.key != f.o.key:
			return nil
		}
	}
	return o
}
