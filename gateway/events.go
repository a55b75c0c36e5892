package gateway

import (
	"context"
	"encoding/json"
	"errors"
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
//
// Unlike go-sdk's store, it keeps the records of at most maxStreams
// streams of a session besides its standalone one (""): go-sdk's handler
// opens a stream for each POST that holds requests and keeps it until
// the session ends (about 210 bytes each, events aside), so a client
// sending requests without end in one session would grow it without
// bound. Past maxStreams the stream longest without an event (or its
// opening) whose requests have all been answered is dropped with its
// events; only when every stream held awaits an answer is the one of them
// longest without an event dropped. A client resuming a stream dropped is
// refused (After fails; go-sdk answers 400), and an event of it appended
// later is refused (Append fails; go-sdk still writes it to the stream's
// response if that is being read). A stream awaits as many answers as
// its POST held requests (callIDsKey; one when the context does not say)
// and is answered once as many responses were appended to it.
type eventStore struct {
	mu         sync.Mutex
	maxBytes   int
	maxStreams int // the streams of a session held besides its standalone one
	internMin  int // the size from which an event's bytes are held once
	nBytes     int
	tick       uint64                     // counts opens and appends: an eventList's used
	sessions   map[string]*sessionStreams // by session id
}

// defaultInternMin is an eventStore's internMin: an event's bytes are
// held once from 256 bytes on, where what unique.Make holds besides them
// is at most about their size (an initialize answer is larger).
const defaultInternMin = 256

// defaultMaxStreams is an eventStore's maxStreams: four times the tool
// calls a session may have in flight by default (MaxCallsPerSession), so
// that a stream in flight is dropped only after the session used 64
// streams since its last event; about 14 KiB of records a session.
const defaultMaxStreams = 64

// sessionStreams are the streams of a session held, by stream id.
type sessionStreams struct {
	streams map[string]*eventList
	// dropped says a stream was dropped (maxStreams): an event of a
	// stream not held then belongs to one dropped, and is refused.
	dropped bool
}

// eventList is the events of one stream held: first is the index of
// data[0] in the stream, size the bytes of data, used the store's tick
// at the stream's last open or append.
type eventList struct {
	first, size int
	used        uint64
	awaiting    int // the answers it is still to carry
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
	return &eventStore{maxBytes: defaultEventBytes, maxStreams: defaultMaxStreams, internMin: defaultInternMin, sessions: make(map[string]*sessionStreams)}
}

// list returns the events of stream streamID of session sessionID,
// recorded empty if there were none (dropped names a stream it dropped
// for it, ""), or nil, when the session dropped streams and opening is
// false (an event of a stream dropped). A stream recorded by opening it
// awaits awaiting answers.
func (s *eventStore) list(sessionID, streamID string, opening bool, awaiting int) (l *eventList, dropped string) {
	ss := s.sessions[sessionID]
	if ss == nil {
		ss = &sessionStreams{streams: make(map[string]*eventList, 1)}
		s.sessions[sessionID] = ss
	}
	s.tick++
	if l = ss.streams[streamID]; l != nil {
		l.used = s.tick
		return l, ""
	}
	if ss.dropped && !opening {
		return nil, ""
	}
	l = &eventList{used: s.tick}
	if opening {
		l.awaiting = awaiting
	}
	ss.streams[streamID] = l
	if streamID != "" && s.maxStreams > 0 && ss.held() > s.maxStreams {
		dropped = s.dropLeastUsed(ss, streamID)
	}
	return l, dropped
}

// held returns the streams of ss held besides its standalone one.
func (ss *sessionStreams) held() int {
	if _, ok := ss.streams[""]; ok {
		return len(ss.streams) - 1
	}
	return len(ss.streams)
}

// dropLeastUsed drops the stream of ss, other than its standalone one
// and keep, longest without an open or an append, with its events, and
// returns its id: one answered if any is, else one awaiting answers.
func (s *eventStore) dropLeastUsed(ss *sessionStreams, keep string) string {
	var id string
	var least *eventList
	for sid, l := range ss.streams {
		if sid == "" || sid == keep {
			continue
		}
		if least == nil || dropsBefore(l, least) {
			id, least = sid, l
		}
	}
	if least == nil {
		return ""
	}
	s.nBytes -= least.size
	delete(ss.streams, id)
	ss.dropped = true
	return id
}

// dropsBefore reports whether l is dropped before m: answered before
// awaiting, then longest without an open or an append first.
func dropsBefore(l, m *eventList) bool {
	if la, ma := l.awaiting == 0, m.awaiting == 0; la != ma {
		return la
	}
	return l.used < m.used
}

// Open records a stream, with no events yet.
func (s *eventStore) Open(ctx context.Context, sessionID, streamID string) error {
	s.open(ctx, sessionID, streamID)
	return nil
}

// open records a stream, with no events yet, awaiting the answers to the
// requests of its POST (callIDsKey in ctx; one when it has none), and
// returns the id of a stream of the session it dropped for it
// (maxStreams), or "".
func (s *eventStore) open(ctx context.Context, sessionID, streamID string) (dropped string) {
	awaiting := 1
	if ids, _ := ctx.Value(callIDsKey{}).([]json.RawMessage); len(ids) > 0 {
		awaiting = len(ids)
	}
	if streamID == "" {
		awaiting = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, dropped = s.list(sessionID, streamID, true, awaiting)
	return dropped
}

// isResponse reports whether data is a JSON-RPC response: an id and no
// method.
func isResponse(data []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return len(data) > 0 && json.Unmarshal(data, &m) == nil && len(m.ID) > 0 && m.Method == ""
}

// errStreamDropped: an event of a stream whose record the store dropped
// (maxStreams).
var errStreamDropped = errors.New("the event store no longer holds the stream")

// Append adds an event to a stream, after dropping the oldest events
// while more than maxBytes are held. It refuses an event of a stream it
// dropped (maxStreams).
func (s *eventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	var e event
	if len(data) >= s.internMin {
		e.large = unique.Make(string(data))
	} else {
		e.small = string(data)
	}
	answer := isResponse(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	l, _ := s.list(sessionID, streamID, false, 0)
	if l == nil {
		return fmt.Errorf("stream %q of session %q (a session keeps its %d most recently used streams): %w", streamID, sessionID, s.maxStreams, errStreamDropped)
	}
	s.purge()
	if answer && l.awaiting > 0 {
		l.awaiting--
	}
	l.data = append(l.data, e)
	l.size += len(data)
	s.nBytes += len(data)
	return nil
}

// purge drops the oldest event of every stream holding bytes, in rounds,
// until at most maxBytes are held.
func (s *eventStore) purge() {
	for s.nBytes > s.maxBytes {
		for _, ss := range s.sessions {
			for _, l := range ss.streams {
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
	ss, ok := s.sessions[sessionID]
	if !ok {
		return nil, fmt.Errorf("event store: unknown session %q", sessionID)
	}
	l, ok := ss.streams[streamID]
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

// holds reports whether the store holds stream streamID of session
// sessionID.
func (s *eventStore) holds(sessionID, streamID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[sessionID]
	return ss != nil && ss.streams[streamID] != nil
}

// SessionClosed drops the events of a session.
func (s *eventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[sessionID]; ss != nil {
		for _, l := range ss.streams {
			s.nBytes -= l.size
		}
	}
	delete(s.sessions, sessionID)
	return nil
}
