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
// dropped when it is closed), with the same answers, but an event's bytes
// held once however many streams hold them (unique.Make): every session
// keeps the answers to its initialize and tools/list requests, which are
// the same for every client that sends the same request, and a
// notification sent to every session is the same bytes in each. The bytes
// counted against maxBytes are those each stream holds, as go-sdk counts
// them.
type eventStore struct {
	mu       sync.Mutex
	maxBytes int
	nBytes   int
	sessions map[string]map[string]*eventList // session id -> stream id -> events
}

// eventList is the events of one stream held: first is the index of
// data[0] in the stream, size the bytes of data.
type eventList struct {
	first, size int
	data        []unique.Handle[string]
}

var _ mcp.EventStore = (*eventStore)(nil)

func newEventStore() *eventStore {
	return &eventStore{maxBytes: defaultEventBytes, sessions: make(map[string]map[string]*eventList)}
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
	h := unique.Make(string(data))
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.list(sessionID, streamID)
	s.purge()
	l.data = append(l.data, h)
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
				n := len(l.data[0].Value())
				l.data[0] = unique.Handle[string]{}
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
		for _, h := range events {
			if !yield([]byte(h.Value()), nil) {
				return
			}
		}
	}
}

func (s *eventStore) after(sessionID, streamID string, index int) ([]unique.Handle[string], error) {
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
	return append([]unique.Handle[string](nil), l.data[start:]...), nil
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
