package gateway

import (
	"sync"
	"time"
)

// sessionFastHeaderDelay is how long a call on the session fast path may
// run before its response's header is sent ahead of its answer (go-sdk's
// handler sends it at once): a client that bounds the wait for a
// response's header sees it in time, and a call answered sooner is
// written in one piece.
const sessionFastHeaderDelay = time.Second

// earlyHeaders sends the response header of each call on the session fast
// path that has run for delay (sessionFastHeaderDelay) ahead of its
// answer (fastConn.writeHeaderEarly), with one timer for all the calls
// in flight: a timer of its own per call would wake the runtime's network
// poller on most calls. Every call waits the same delay, so the calls
// come due in the order they started: they are queued in that order, and
// the timer is set for the first one's due time. A call that ends leaves
// the queue; the timer, when it fires, sends the headers come due, each
// on a goroutine of its own (as a timer of its own would: a client that
// does not read holds up its own header only), and is set again for the
// next call due.
type earlyHeaders struct {
	delay time.Duration

	mu         sync.Mutex
	head, tail *earlyCall
	timer      *time.Timer // made for the first call
	armed      bool        // timer is set and has not fired
	closed     bool        // the gateway closed: no header is sent early any more
}

// earlyCall is a call in the queue of earlyHeaders.
type earlyCall struct {
	c          *fastConn
	due        time.Time
	prev, next *earlyCall
	queued     bool
}

// add queues the header of c's call, due after e.delay, until remove.
func (e *earlyHeaders) add(c *fastConn) *earlyCall {
	ec := &earlyCall{c: c, due: time.Now().Add(e.delay)}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ec
	}
	ec.prev, ec.queued = e.tail, true
	if e.tail != nil {
		e.tail.next = ec
	} else {
		e.head = ec
	}
	e.tail = ec
	if !e.armed {
		e.arm(e.delay)
	}
	return ec
}

// remove takes ec out of the queue: its call has ended. A header being
// sent already is sent (writeHeaderEarly orders it with the answer).
func (e *earlyHeaders) remove(ec *earlyCall) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unlink(ec)
}

// unlink takes ec out of the queue; e.mu is held.
func (e *earlyHeaders) unlink(ec *earlyCall) {
	if !ec.queued {
		return
	}
	if ec.prev != nil {
		ec.prev.next = ec.next
	} else {
		e.head = ec.next
	}
	if ec.next != nil {
		ec.next.prev = ec.prev
	} else {
		e.tail = ec.prev
	}
	ec.prev, ec.next, ec.queued = nil, nil, false
}

// arm sets the timer to fire after d; e.mu is held.
func (e *earlyHeaders) arm(d time.Duration) {
	if e.timer == nil {
		e.timer = time.AfterFunc(d, e.fire)
	} else {
		e.timer.Reset(d)
	}
	e.armed = true
}

// fire sends the headers come due and sets the timer for the next call.
func (e *earlyHeaders) fire() {
	e.mu.Lock()
	e.armed = false
	now := time.Now()
	var due []*fastConn
	for e.head != nil && !e.head.due.After(now) {
		ec := e.head
		e.unlink(ec)
		due = append(due, ec.c)
	}
	if e.head != nil && !e.closed {
		e.arm(e.head.due.Sub(now))
	}
	e.mu.Unlock()
	for _, c := range due {
		go c.writeHeaderEarly()
	}
}

// close stops sending headers early (the gateway is closing).
func (e *earlyHeaders) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for e.head != nil {
		e.unlink(e.head)
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	e.armed = false
}
