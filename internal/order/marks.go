package order

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Quiet is how long Wait waits without any notification of the
// connection handled before it gives up: a handler that blocks holds a
// call back this long at most.
const Quiet = time.Second

// markerPrefix starts every marker's progress token.
const markerPrefix = "mcpadapter-order-"

// Marks are one connection's markers: how many were issued, and the
// highest one the client's middleware reached. The zero value is not
// ready: use New. A nil *Marks issues none and waits for nothing.
type Marks struct {
	prefix  string // markerPrefix, this connection's nonce and "-"
	tagKey  string // prefix and "stream" (TagKey)
	tagLead []byte // tagKey as a JSON member up to its value's digits (TagLead)
	issued  atomic.Int64
	reached atomic.Int64 // markers reached, and those Wait gave up on
	arrived atomic.Int64 // the highest marker the middleware reached
	ended   atomic.Bool  // the connection ended (End)
	handled atomic.Int64 // notifications handled, markers included
	waiting atomic.Int32 // callers in Wait
	streams atomic.Int64 // request streams numbered (Streams.On)

	// inOrder: the connection's reader passes up its messages in the
	// order the server sent them and the markers Boundary hands it.
	inOrder atomic.Bool
	// boundary: a request's Span asked for a marker before the next
	// message read (Boundary); bmu orders asking and handing it out.
	boundary atomic.Bool
	bmu      sync.Mutex

	mu   sync.Mutex
	wake chan struct{} // closed on progress while someone waits; nil when no one
}

// New returns the marks of a new connection.
func New() *Marks {
	var n [8]byte
	_, _ = rand.Read(n[:])
	prefix := markerPrefix + hex.EncodeToString(n[:]) + "-"
	return &Marks{prefix: prefix, tagKey: prefix + "stream", tagLead: []byte(`"` + prefix + `stream":"`)}
}

// Issue counts a new marker and returns it, to pass up before the
// response read next.
func (m *Marks) Issue() *jsonrpc.Request {
	n := m.issued.Add(1)
	return &jsonrpc.Request{Method: "notifications/progress", Params: m.params(n)}
}

// AppendEvent counts a new marker and appends it to b as a server-sent
// event.
func (m *Marks) AppendEvent(b []byte) []byte {
	n := m.issued.Add(1)
	b = append(b, `event: message`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/progress","params":`...)
	b = append(b, m.params(n)...)
	return append(b, "}\n\n"...)
}

func (m *Marks) params(n int64) []byte {
	b := make([]byte, 0, 80)
	b = append(b, `{"progressToken":"`...)
	b = append(b, m.prefix...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, `","progress":0}`...)
}

// Reached reports whether token, the progress token of a notification the
// client is about to handle, is one of m's markers, and if so notes it
// reached. The client's receiving middleware calls it for every
// notifications/progress, and hands no marker on.
func (m *Marks) Reached(token any) bool {
	s, ok := token.(string)
	if m == nil || !ok || !strings.HasPrefix(s, m.prefix) {
		return false
	}
	n, err := strconv.ParseInt(s[len(m.prefix):], 10, 64)
	if err != nil {
		return false
	}
	raise(&m.arrived, n)
	raise(&m.reached, n)
	return true
}

// raise sets v to n unless it holds more.
func raise(v *atomic.Int64, n int64) {
	for {
		r := v.Load()
		if n <= r || v.CompareAndSwap(r, n) {
			return
		}
	}
}

// Handled notes that the handler of a notification (or a marker) has
// returned.
func (m *Marks) Handled() {
	if m == nil {
		return
	}
	m.handled.Add(1)
	if m.waiting.Load() > 0 {
		m.mu.Lock()
		if m.wake != nil {
			close(m.wake)
			m.wake = nil
		}
		m.mu.Unlock()
	}
}

// Wait returns once every marker issued before it was called has been
// reached: the notifications read before the answers read so far have
// been handled. It gives up when ctx ends, when gone is closed (the
// connection ended: the markers will not come), or when Quiet passes
// without any notification handled (then no later Wait waits for those
// markers again), and reports whether the markers were reached.
//
// Called in the handler of one of the connection's notifications (ctx
// from Handle, the handler still running), Wait does not wait: the
// notifications read after the one being handled are handled after the
// handler returns, so waiting for them would only hold the handler, and
// every call waiting behind it, until Quiet gives up on their markers.
func (m *Marks) Wait(ctx context.Context, gone <-chan struct{}) bool {
	if m == nil {
		return true
	}
	want := m.issued.Load()
	if m.reached.Load() >= want {
		return true
	}
	if m.handling(ctx) {
		return false
	}
	return m.wait(ctx, gone, want)
}

type handlingKey struct{}

// handler is a notification's handler of a connection (Handle).
type handler struct {
	m    *Marks
	done atomic.Bool // the handler returned
}

// Handle returns the context for the handler of a notification of m's
// connection, and the function to call once that handler has returned:
// until then, Wait made with that context (or one made from it) does not
// wait for the notifications read after it.
func (m *Marks) Handle(ctx context.Context) (context.Context, func()) {
	h := &handler{m: m}
	return context.WithValue(ctx, handlingKey{}, h), func() { h.done.Store(true) }
}

// handling reports whether ctx is that of a handler of a notification of
// m's connection that has not returned (Handle).
func (m *Marks) handling(ctx context.Context) bool {
	h, _ := ctx.Value(handlingKey{}).(*handler)
	return h != nil && h.m == m && !h.done.Load()
}

func (m *Marks) wait(ctx context.Context, gone <-chan struct{}, want int64) bool {
	m.waiting.Add(1)
	defer m.waiting.Add(-1)
	t := time.NewTimer(Quiet)
	defer t.Stop()
	seen := m.handled.Load()
	for {
		m.mu.Lock()
		if m.wake == nil {
			m.wake = make(chan struct{})
		}
		wake := m.wake
		m.mu.Unlock()
		if m.reached.Load() >= want {
			return true
		}
		select {
		case <-wake:
		case <-t.C:
			if m.handled.Load() == seen {
				m.giveUp(want)
				return false
			}
			t.Reset(Quiet)
		case <-ctx.Done():
			return false
		case <-gone:
			return false
		}
		if h := m.handled.Load(); h != seen {
			seen = h
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
			t.Reset(Quiet)
		}
	}
}

// giveUp counts the markers up to want as reached: a marker Wait gave up
// on (its notifications' handler blocks, or its reader dropped it unread)
// holds no later call back; a later call waits only for the markers
// issued after it.
func (m *Marks) giveUp(want int64) {
	raise(&m.reached, want)
}

// IsMarker reports whether msg is one of m's markers: the protocol trace
// leaves them out, and keeps every message of the server's, even one
// whose progress token looks like a marker's.
func (m *Marks) IsMarker(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if m == nil || !ok || req.IsCall() || req.Method != "notifications/progress" {
		return false
	}
	var p struct {
		ProgressToken any `json:"progressToken"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return false
	}
	s, ok := p.ProgressToken.(string)
	return ok && strings.HasPrefix(s, m.prefix)
}
