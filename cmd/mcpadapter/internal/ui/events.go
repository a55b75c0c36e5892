package ui

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// An Event is one thing the page learns about as it happens: a protocol
// message, a client log line, a call's new state, a change of the
// servers or their tools.
type Event struct {
	// Seq numbers the events from 1, in order.
	Seq int64 `json:"seq"`
	// Time is when it happened.
	Time time.Time `json:"time"`
	// Kind is "trace", "log", "call", "servers" or "tools".
	Kind string `json:"kind"`
	// Trace is set on a trace or log event.
	Trace *TraceEntry `json:"trace,omitempty"`
	// Call is set on a call event: the call's whole state.
	Call *CallState `json:"call,omitempty"`

	size int // what the event holds, in bytes, roughly
}

// TraceEntry is one JSON-RPC message a client sent or received (redacted
// by the core), or one of a client's log lines.
type TraceEntry struct {
	// Server names the server.
	Server string `json:"server"`
	// Dir is "send" or "recv" for a message, "log" for a log line.
	Dir string `json:"dir"`
	// Method is the message's method; a response has none ("").
	Method string `json:"method,omitempty"`
	// ID is the message's JSON-RPC id, if any.
	ID json.RawMessage `json:"id,omitempty"`
	// Message is the message (redacted JSON), or the log line.
	Message string `json:"message"`
	// Level is a log line's level.
	Level string `json:"level,omitempty"`
}

// eventLog keeps the latest events and lets readers wait for new ones.
type eventLog struct {
	mu       sync.Mutex
	max      int     // events kept, at most
	maxBytes int     // bytes the events hold, at most (roughly)
	events   []Event // the latest
	bytes    int     // the sum of the events' sizes
	next     int64   // Seq of the next event
	changed  chan struct{}
}

func newEventLog(max, maxBytes int) *eventLog {
	return &eventLog{max: max, maxBytes: maxBytes, next: 1, changed: make(chan struct{})}
}

// eventSize is roughly what e holds beyond what other events share with
// it (a call's arguments and result are the call's).
func eventSize(e *Event) int {
	n := 128
	if e.Trace != nil {
		n += len(e.Trace.Message) + len(e.Trace.Server) + len(e.Trace.ID)
	}
	if c := e.Call; c != nil {
		if c.Progress != nil {
			n += len(c.Progress.Message)
		}
		if c.Task != nil {
			for _, s := range c.Task.History {
				n += 64 + len(s.Message)
			}
		}
	}
	return n
}

// add appends e, numbering it, and wakes the readers. When the log is
// full (in events or in bytes) its older half goes.
func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Seq = l.next
	l.next++
	e.size = eventSize(&e)
	if len(l.events) >= l.max || l.bytes+e.size > l.maxBytes {
		drop := 0
		for drop < len(l.events) && (len(l.events)-drop > l.max/2 || l.bytes+e.size > l.maxBytes/2) {
			l.bytes -= l.events[drop].size
			drop++
		}
		n := copy(l.events, l.events[drop:])
		clear(l.events[n:])
		l.events = l.events[:n]
	}
	l.events = append(l.events, e)
	l.bytes += e.size
	close(l.changed)
	l.changed = make(chan struct{})
}

// since returns the events after seq (at most limit), whether some were
// lost (dropped from the log before they were read), and a channel that
// is closed when the next event is added.
func (l *eventLog) since(seq int64, limit int) ([]Event, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for i < len(l.events) && l.events[i].Seq <= seq {
		i++
	}
	lost := len(l.events) > 0 && l.events[0].Seq > seq+1
	out := l.events[i:]
	if len(out) > limit {
		out = out[:limit]
	}
	return append([]Event(nil), out...), lost, l.changed
}

// wait returns the events after seq, waiting for one until ctx ends or
// done is closed.
func (l *eventLog) wait(ctx context.Context, done <-chan struct{}, seq int64, limit int) ([]Event, bool) {
	for {
		events, lost, changed := l.since(seq, limit)
		if len(events) > 0 || lost {
			return events, lost
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, false
		case <-done:
			return nil, false
		}
	}
}

// traces returns every trace and log entry kept.
func (l *eventLog) traces() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if e.Trace != nil {
			out = append(out, e)
		}
	}
	return out
}
