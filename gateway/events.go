package gateway

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"unique"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultEventBytes bounds the events an eventStore holds, as go-sdk's
// MemoryEventStore's default does.
const defaultEventBytes = 10 << 20

// eventStore is the event store of the gateway's handler with sessions:
// what go-sdk's MemoryEventStore does (the events of each stream of each
// session, for a client that resumes a stream; the oldest event of every
// stream dropped in turn while more than maxBytes are held; a session's
// dropped when it is closed), with the same answers, but the bytes of an
// event of at least internMin bytes held once however many streams hold
// them (unique.Make): every session keeps the answers to its initialize
// and tools/list requests, which are the same for every client that
// sends the same request, and a notification sent to every session is the
// same bytes in each. A smaller event is held as a copy of its own: a
// value unique.Make holds costs about 250 bytes besides its own, which a
// server sending many small events, each different, would otherwise
// multiply the store's heap by (7 times its bound for 40-byte events).
// The bytes counted against maxBytes are those each stream holds, as
// go-sdk counts them.
type eventStore struct {
	mu        sync.Mutex
	maxBytes  int
	internMin int // the size from which an event's bytes are held once
	nBytes    int
	sessions  map[string]map[string]*eventList // session id -> stream id -> events
}

// defaultInternMin is an eventStore's internMin: an event's bytes are
// held once from 256 bytes on, where what unique.Make holds besides them
// is at most about their size (an initialize answer is larger).
const defaultInternMin = 256

// eventList is the events of one stream held: first is the index of
// data[0] in the stream, size the bytes of data.
type eventList struct {
	first, size int
	data        []event
}

// event is the bytes of an event: small, or held once (large).
type event struct {
	small string
	large unique.Handle[string] // zero for a small event
}

// bytes returns the event's bytes.
func (e event) bytes() string {
	if e.large == (unique.Handle[string]{}) {
		return e.small
	}
	return e.large.Value()
}

var _ mcp.EventStore = (*eventStore)(nil)

func newEventStore() *eventStore {
	return &eventStore{maxBytes: defaultEventBytes, internMin: defaultInternMin, sessions: make(map[string]map[string]*eventList)}
}

// list returns the events of stream streamID of session sessionID,
// recorded empty if there were none.
func (s *eventStore) list(sessionID, streamID string) *eventList {
	streams := s.sessions[sessionID]
	if streams == nil {
		streams = make(map[string]*eventList, 1)
		s.sessions[sessionID] = streams
	}
	l := streams[streamID]
	if l == nil {
		l = &eventList{}
		streams[streamID] = l
	}
	return l
}

// Open records a stream, with no events yet.
func (s *eventStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list(sessionID, streamID)
	return nil
}

// Append adds an event to a stream, after dropping the oldest events
// while more than maxBytes are held.
func (s *eventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	var e event
	if len(data) >= s.internMin {
		e.large = unique.Make(string(data))
	} else {
		e.small = string(data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.list(sessionID, streamID)
	s.purge()
	l.data = append(l.data, e)
	l.size += len(data)
	s.nBytes += len(data)
	return nil
}

// purge drops the oldest event of every stream holding bytes, in rounds,
// until at most maxBytes are held.
func (s *eventStore) purge() {
	for s.nBytes > s.maxBytes {
		for _, streams := range s.sessions {
			for _, l := range streams {
				if l.size == 0 {
					continue
				}
				n := len(l.data[0].bytes())
				l.data[0] = event{}
				l.data = l.data[1:]
				l.first++
				l.size -= n
				s.nBytes -= n
			}
		}
	}
}

// After yields the events of a stream after the one at index. It fails
// for a session or stream it does not know, and with mcp.ErrEventsPurged
// when events after index have been dropped.
func (s *eventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	events, err := s.after(sessionID, streamID, index)
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, e := range events {
			if !yield([]byte(e.bytes()), nil) {
				return
			}
		}
	}
}

func (s *eventStore) after(sessionID, streamID string, index int) ([]event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	streams, ok := s.sessions[sessionID]
	if !ok {
		return nil, fmt.Errorf("event store: unknown session %q", sessionID)
	}
	l, ok := streams[streamID]
	if !ok {
		return nil, fmt.Errorf("event store: unknown stream %q of session %q", streamID, sessionID)
	}
	start := index + 1 - l.first
	if start < 0 {
		return nil, fmt.Errorf("event store: events after %d of stream %q of session %q: %w", index, streamID, sessionID, mcp.ErrEventsPurged)
	}
	if start >= len(l.data) {
		return nil, nil
	}
	return append([]event(nil), l.data[start:]...), nil
}

// SessionClosed drops the events of a session.
func (s *eventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.sessions[sessionID] {
		s.nBytes -= l.size
	}
	delete(s.sessions, sessionID)
	return nil
}
