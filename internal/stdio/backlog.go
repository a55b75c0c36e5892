package stdio

import (
	"bytes"
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

// backlog holds back a server that floods the client with notifications,
// and keeps the result of a call that asked for progress behind the
// notifications the server sent before it.
//
// go-sdk queues every request and notification from the server in an
// unbounded list and hands them to their handlers one at a time, in order,
// but it hands a response to its caller as soon as it is read. So a server
// that writes faster than the handlers run grows that list without limit
// (and go-sdk never shrinks it), and a call can return while the progress
// notifications its server sent before the result still wait in the list
// (to be dropped once the call's progress token is forgotten).
//
// The connection counts what it passes up, the client's receiving
// middleware reports what has been handled (Conn.MessageHandled), and
// Read stops reading while more than maxBacklog are waiting. When
// backlogWait passes without any message being handled (a handler that
// blocks, or messages go-sdk drops before any handler, such as
// notifications of a method it does not know, which are never counted),
// Read lets the next maxBacklog messages through: it slows a server down
// but does not stall it.
//
// With Transport.HoldResults, the result of a request sent with a progress
// token waits while messages read before it are not handled: Read first
// passes up a barrier, a notifications/progress with a token of this
// connection's own, which go-sdk queues behind them, and returns the
// result once the client's middleware has reached the barrier
// (Conn.Barrier), that is once every notification before it has been
// handled (or dropped). A handler that does not move holds the result for
// responseTicks ticks in a row without progress at most; counting ticks
// rather than one long timer keeps a process that the machine did not run
// for a while (heavy load) from mistaking that for a handler that is stuck.
type backlog struct {
	read    int64 // requests and notifications passed up; Read's goroutine only
	free    int64 // Read passes up messages up to this count without waiting; Read's goroutine only
	handled atomic.Int64
	wake    chan struct{}

	hold     bool   // HoldResults
	nonce    string // prefix of this connection's barrier tokens
	barriers int64  // barriers passed up; Read's goroutine only
	reached  atomic.Int64

	mu       sync.Mutex
	progress map[jsonrpc.ID]bool // requests sent with a progress token, awaiting their result
}

const (
	maxBacklog    = 256
	backlogWait   = 20 * time.Millisecond
	responseTick  = 50 * time.Millisecond
	responseTicks = 40 // 2 s without progress
	// maxAwaited bounds the requests remembered for their result (calls
	// the server never answers are forgotten in bulk).
	maxAwaited = 4096
)

func newBacklog(hold bool) *backlog {
	b := &backlog{wake: make(chan struct{}, 1), hold: hold}
	if hold {
		var n [8]byte
		_, _ = rand.Read(n[:])
		b.nonce = "mcpadapter-barrier-" + hex.EncodeToString(n[:]) + "-"
	}
	return b
}

// sent is called by Write for every message it writes.
func (b *backlog) sent(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if b == nil || !b.hold || !ok || !req.IsCall() || !bytes.Contains(req.Params, []byte(`"progressToken"`)) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.progress == nil || len(b.progress) >= maxAwaited {
		b.progress = make(map[jsonrpc.ID]bool)
	}
	b.progress[req.ID] = true
}

// awaited reports whether id is a request sent with a progress token, and
// forgets it.
func (b *backlog) awaited(id jsonrpc.ID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.progress[id] {
		return false
	}
	delete(b.progress, id)
	return true
}

// passUp is called by Read before it returns msg, a message read from the
// server. It holds Read back while too many messages wait.
func (b *backlog) passUp(ctx context.Context, msg jsonrpc.Message) {
	if _, ok := msg.(*jsonrpc.Request); !ok || b == nil {
		return
	}
	b.read++
	if b.read > b.free && !b.waitFor(ctx, func() bool { return b.read-b.handled.Load() <= maxBacklog }, backlogWait, 1) {
		b.free = b.read + maxBacklog
	}
}

// barrierFor returns the barrier to pass up before msg when msg is a
// result to hold: a request's with a progress token, read while messages
// before it wait for their handlers. Otherwise it returns nil.
func (b *backlog) barrierFor(msg jsonrpc.Message) *jsonrpc.Request {
	resp, ok := msg.(*jsonrpc.Response)
	if b == nil || !ok || !b.awaited(resp.ID) || b.read-b.handled.Load() <= 0 {
		return nil
	}
	b.barriers++
	b.read++
	token, _ := json.Marshal(b.nonce + strconv.FormatInt(b.barriers, 10))
	return &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":` + string(token) + `,"progress":0}`)}
}

// awaitBarrier waits until the last barrier passed up has been reached,
// or until responseTicks ticks in a row pass without any message handled.
func (b *backlog) awaitBarrier(ctx context.Context) {
	b.waitFor(ctx, func() bool { return b.reached.Load() >= b.barriers }, responseTick, responseTicks)
}

// barrier reports whether token is one of this connection's barriers, and
// if so notes it reached.
func (b *backlog) barrier(token any) bool {
	s, ok := token.(string)
	if b == nil || !b.hold || !ok || !strings.HasPrefix(s, b.nonce) {
		return false
	}
	n, err := strconv.ParseInt(s[len(b.nonce):], 10, 64)
	if err != nil {
		return false
	}
	for {
		r := b.reached.Load()
		if n <= r || b.reached.CompareAndSwap(r, n) {
			break
		}
	}
	b.signal()
	return true
}

// waitFor waits until done (or ctx ends), and reports false if ticks ticks
// of tick passed in a row without any message being handled.
func (b *backlog) waitFor(ctx context.Context, done func() bool, tick time.Duration, ticks int) bool {
	idle := 0
	for !done() {
		seen := b.handled.Load()
		t := time.NewTimer(tick)
		select {
		case <-b.wake:
			t.Stop()
			idle = 0
		case <-t.C:
			if b.handled.Load() != seen {
				idle = 0
			} else if idle++; idle >= ticks {
				return false
			}
		case <-ctx.Done():
			t.Stop()
			return true
		}
	}
	return true
}

// handledOne is called when a message has been handled.
func (b *backlog) handledOne() {
	b.handled.Add(1)
	b.signal()
}

func (b *backlog) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
