package gateway

import (
	"net/http"
	"sync"
	"time"
)

// closeWriteGrace is how long the answers being written when Close is
// called may take: a client that reads gets its answer whole (what a
// closing session writes), one that does not holds Close no longer.
const closeWriteGrace = time.Second

// answerWriters holds the response writers of the HTTP requests being
// answered, so that Close can end their writes: a client that stops
// reading an answer keeps its write, and the session writing it, waiting
// for as long as it holds the connection.
type answerWriters struct {
	mu     sync.Mutex
	active map[*http.ResponseWriter]struct{}
	// cut: Close has cut the writes; a request that comes after gets
	// closeWriteGrace from when it came (Close may still be closing its
	// session, which waits for its answer).
	cut bool
}

// add records w until done is called.
func (a *answerWriters) add(w http.ResponseWriter) (done func()) {
	key := &w
	a.mu.Lock()
	if a.cut {
		a.mu.Unlock()
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(closeWriteGrace))
		return func() {}
	}
	if a.active == nil {
		a.active = make(map[*http.ResponseWriter]struct{})
	}
	a.active[key] = struct{}{}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		delete(a.active, key)
		a.mu.Unlock()
	}
}

// cutAll makes the writes of every answer being written, and of every
// answer begun later, fail after closeWriteGrace (a write deadline, where
// the connection allows one), and returns when the first of them fail.
func (a *answerWriters) cutAll() (deadline time.Time) {
	deadline = time.Now().Add(closeWriteGrace)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cut = true
	for w := range a.active {
		_ = http.NewResponseController(*w).SetWriteDeadline(deadline)
	}
	a.active = nil
	return deadline
}

// closeWriteSlack is how long past the cut writes' deadline Close waits
// for the relays' writers held up by them (a progress report or log
// message written on a request's stream by a fast path) to end.
const closeWriteSlack = 250 * time.Millisecond
