package order

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A Spot is a place in one connection's messages from the server,
// counted in markers: Here after the answers read so far, Handling at
// the notification whose handler runs now. It lets a client that shares
// a connection among callers tell which callers' requests a notification
// that names none can be for (the gateway's log messages of a
// handshake-era server): one read after a request's answer is not the
// request's, nor one read before the request was sent. The zero Spot is
// on no connection.
type Spot struct {
	m *Marks
	n int64
}

// Here returns the connection's place after the answers read so far (the
// markers issued).
func (m *Marks) Here() Spot {
	if m == nil {
		return Spot{}
	}
	return Spot{m: m, n: m.issued.Load()}
}

// InOrder notes that the connection's reader passes up its messages in
// the order the server sent them (one stream: stdio, a legacy SSE
// connection) and, before the next request or notification it reads,
// the marker Boundary returns: so a request's place when it was sent
// (Span.Sent) comes after every notification read before that. Such a
// marker holds no call's Wait back: the next response read after it
// comes after a marker of its own.
func (m *Marks) InOrder() {
	if m != nil {
		m.inOrder.Store(true)
	}
}

// Boundary returns the marker a request's Span asked for (Span.Sent),
// which the reader of an InOrder connection passes up before the request
// or notification it read just now; nil when none was asked for.
func (m *Marks) Boundary() *jsonrpc.Request {
	if m == nil || !m.boundary.Load() {
		return nil
	}
	m.bmu.Lock()
	defer m.bmu.Unlock()
	if !m.boundary.Swap(false) {
		return nil
	}
	return m.Issue()
}

// sending returns the place of a request about to be sent: on an InOrder
// connection, the marker the reader passes up before the next request or
// notification it reads (Boundary), so that every notification read so far comes before
// it; else Here (the markers issued so far: a notification read since
// the last of them does not come before the request).
func (m *Marks) sending() Spot {
	if m == nil || !m.inOrder.Load() {
		return m.Here()
	}
	m.bmu.Lock()
	defer m.bmu.Unlock()
	m.boundary.Store(true)
	return Spot{m: m, n: m.issued.Load() + 1}
}

// Handling returns the place of the notification whose handler runs now
// (the markers the client's middleware reached before it; not those Wait
// gave up on): it was read after every marker counted and before the
// next.
func (m *Marks) Handling() Spot {
	if m == nil {
		return Spot{}
	}
	return Spot{m: m, n: m.arrived.Load()}
}

// End notes that the connection ended: its markers will not come.
func (m *Marks) End() {
	if m != nil {
		m.ended.Store(true)
	}
}

// Before reports whether s, a notification's place (Handling), comes
// before t (Here, taken after an answer or before a request was sent) on
// the same connection.
func (s Spot) Before(t Spot) bool {
	return s.m != nil && s.m == t.m && s.n < t.n
}

// Apart reports whether s and t are places on two different connections
// (neither the zero Spot).
func (s Spot) Apart(t Spot) bool {
	return s.m != nil && t.m != nil && s.m != t.m
}

// Passed reports whether every notification before s has been handled,
// or s's connection ended (or s is on none): no notification handled
// from now on comes before s.
func (s Spot) Passed() bool {
	return s.m == nil || s.m.ended.Load() || s.m.arrived.Load() >= s.n
}

// A Span records where one request stood in its connection's messages:
// the connection's place when it was sent, and after its answer was read.
// A caller puts it in the request's context (WithSpan); the client's
// session fills it in. Its methods are safe to call at once, and on nil.
type Span struct {
	mu             sync.Mutex
	sent, answered Spot
}

type spanKey struct{}

// WithSpan returns ctx carrying sp, for the session that sends a request
// made with it to fill in.
func WithSpan(ctx context.Context, sp *Span) context.Context {
	return context.WithValue(ctx, spanKey{}, sp)
}

// SpanFrom returns the Span ctx carries, or nil.
func SpanFrom(ctx context.Context) *Span {
	sp, _ := ctx.Value(spanKey{}).(*Span)
	return sp
}

// Sent notes the place of m's connection as the request is sent (again:
// a request sent anew on another connection starts over).
func (sp *Span) Sent(m *Marks) {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	sp.sent, sp.answered = m.sending(), Spot{}
	sp.mu.Unlock()
}

// Answered notes the place of m's connection after the request's answer
// was read (or the request failed).
func (sp *Span) Answered(m *Marks) {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	sp.answered = m.Here()
	sp.mu.Unlock()
}

// Places returns the places noted: where the connection stood when the
// request was sent and after its answer (zero Spots when not noted).
func (sp *Span) Places() (sent, answered Spot) {
	if sp == nil {
		return Spot{}, Spot{}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.sent, sp.answered
}

type marksKey struct{}

// WithMarks returns ctx carrying m: given to a connection's Connect, it
// reaches the handlers of the connection's notifications (HandlingFrom).
func WithMarks(ctx context.Context, m *Marks) context.Context {
	return context.WithValue(ctx, marksKey{}, m)
}

// HandlingFrom returns, in the handler of a notification of a connection
// whose context carries its Marks (WithMarks), the notification's place
// (Marks.Handling); the zero Spot when ctx carries none.
func HandlingFrom(ctx context.Context) Spot {
	m, _ := ctx.Value(marksKey{}).(*Marks)
	return m.Handling()
}
