package stdio

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// backlog holds back a server that floods the client with notifications.
//
// go-sdk queues every request and notification from the server in an
// unbounded list and hands them to their handlers one at a time, in order.
// So a server that writes faster than the handlers run grows that list
// without limit (and go-sdk never shrinks it).
//
// The connection counts what it passes up, the client's receiving
// middleware reports what has been handled (Conn.MessageHandled), and
// Read stops reading while more than maxBacklog are waiting. When
// backlogWait passes without any message being handled (a handler that
// blocks, or messages go-sdk drops before any handler, such as
// notifications of a method it does not know, which are never counted),
// Read lets the next maxBacklog messages through: it slows a server down
// but does not stall it. (That a call's answer comes after the
// notifications read before it is the markers' work: Transport.Marks.)
type backlog struct {
	read    int64 // requests and notifications passed up; Read's goroutine only
	free    int64 // Read passes up messages up to this count without waiting; Read's goroutine only
	handled atomic.Int64
	wake    chan struct{}
}

const (
	maxBacklog  = 256
	backlogWait = 20 * time.Millisecond
)

func newBacklog() *backlog {
	return &backlog{wake: make(chan struct{}, 1)}
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
