package testserver

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sync"
)

// State records what a test server observed, so tests can assert on the
// server side. It is safe for concurrent use. The zero value is not usable;
// obtain one from [NewWithState].
type State struct {
	mu            sync.Mutex
	changed       chan struct{} // closed and replaced on every update
	listCalls     int
	calls         map[string]int
	cancellations int
	lastHeaders   map[string]http.Header
	requests      map[string]int // by method
	reads         map[string]int // resources/read by URI
	lastArgs      map[string]json.RawMessage
	maxInFlight   int // the most tools/call at once (Options.OneCallAtATime)
	overlaps      int // the calls refused for overlapping
}

func newState() *State {
	return &State{
		changed:     make(chan struct{}),
		calls:       make(map[string]int),
		lastHeaders: make(map[string]http.Header),
		requests:    make(map[string]int),
		reads:       make(map[string]int),
		lastArgs:    make(map[string]json.RawMessage),
	}
}

// update runs f under the lock and wakes up waiters.
func (s *State) update(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *State) recordList() { s.update(func() { s.listCalls++ }) }

func (s *State) recordRequest(method string) { s.update(func() { s.requests[method]++ }) }

// recordRead counts a read of uri and returns how many there have been.
func (s *State) recordRead(uri string) int {
	var n int
	s.update(func() {
		s.reads[uri]++
		n = s.reads[uri]
	})
	return n
}

// Requests returns the number of messages received for method, such as
// "tools/list" or "server/discover". Every page of a listing is one.
func (s *State) Requests(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[method]
}

// Reads returns the number of resources/read requests received for uri.
func (s *State) Reads(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[uri]
}

func (s *State) recordCall(name string, h http.Header, args json.RawMessage) {
	s.update(func() {
		s.calls[name]++
		s.lastArgs[name] = slices.Clone(args)
		if h != nil {
			s.lastHeaders[name] = h.Clone()
		} else {
			delete(s.lastHeaders, name)
		}
	})
}

// recordInFlight notes n tools/call in flight at once; more than one is an
// overlap.
func (s *State) recordInFlight(n int) {
	s.update(func() {
		s.maxInFlight = max(s.maxInFlight, n)
		if n > 1 {
			s.overlaps++
		}
	})
}

// LastArguments returns the arguments of the most recent call of the named
// tool, byte for byte as the server received them, or nil.
func (s *State) LastArguments(tool string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lastArgs[tool])
}

// MaxInFlight returns the most tools/call requests a server with
// Options.OneCallAtATime saw in flight at once.
func (s *State) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Overlaps returns how many calls a server with Options.OneCallAtATime
// refused because another call was in flight.
func (s *State) Overlaps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overlaps
}

func (s *State) recordCancel() { s.update(func() { s.cancellations++ }) }

// ListCalls returns the number of tools/list requests received (one per
// page).
func (s *State) ListCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listCalls
}

// Calls returns the number of tools/call requests received for the named
// tool, including calls of unknown tools.
func (s *State) Calls(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

// AllCalls returns a copy of the tools/call counts by tool name.
func (s *State) AllCalls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// Cancellations returns how many calls of the slow tool observed the
// cancellation of their context before finishing.
func (s *State) Cancellations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancellations
}

// LastHeaders returns a copy of the HTTP request headers seen by the most
// recent call of the named tool, or nil if the tool was never called or its
// last call did not arrive over HTTP.
func (s *State) LastHeaders(tool string) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastHeaders[tool].Clone()
}

// Wait blocks until cond (called with the State unlocked, and re-evaluated
// after every recorded event) returns true, or ctx is done.
func (s *State) Wait(ctx context.Context, cond func(*State) bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond(s) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
