package stdio

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// backlog holds back a server that floods the client with notifications,
// and keeps a response behind the notifications the server sent before it.
//
// go-sdk queues every request and notification from the server in an
// unbounded list and hands them to their handlers one at a time, but it
// hands a response to its caller as soon as it is read. So a server that
// writes faster than the handlers run grows that list without limit (and
// go-sdk never shrinks it), and a call can return while the progress and
// log notifications its server sent before the result still wait in the
// list. The connection counts what it passes up, the client's receiving
// middleware reports what has been handled (Conn.MessageHandled), and Read
// stops reading while more than maxBacklog are waiting; a response is held
// until every message read before it has been handled.
//
// It never waits long without progress. When backlogWait passes without
// any message being handled (a handler that blocks, or messages go-sdk
// drops before any handler, which are never counted), Read lets the next
// maxBacklog messages through, so it can slow a server down but not stall
// it. When a response has waited responseWait without progress, it is let
// through and the messages it waited for are written off (until they are
// handled after all).
type backlog struct {
	read    int64 // requests and notifications passed up; Read's goroutine only
	lost    int64 // of those, the ones written off; Read's goroutine only
	free    int64 // Read passes up messages up to this count without waiting; Read's goroutine only
	handled atomic.Int64
	wake    chan struct{}
}

const (
	maxBacklog  = 256
	backlogWait = 20 * time.Millisecond
	// responseWait is longer: under load a handler may not run for a
	// while, and giving up lets the response overtake notifications.
	responseWait = time.Second
)

func newBacklog() *backlog { return &backlog{wake: make(chan struct{}, 1)} }

// passUp is called by Read before it returns msg.
func (b *backlog) passUp(ctx context.Context, msg jsonrpc.Message) {
	if b == nil {
		return
	}
	if _, ok := msg.(*jsonrpc.Request); ok {
		b.read++
		if b.read > b.free && !b.waitFor(ctx, maxBacklog, backlogWait) {
			b.free = b.read + maxBacklog
		}
		return
	}
	// A response: the notifications before it (its call's progress) are
	// handled before its caller sees it.
	if !b.waitFor(ctx, 0, responseWait) {
		b.lost = b.read - b.handled.Load()
	}
}

// waiting returns how many messages passed up wait for their handlers,
// not counting those written off.
func (b *backlog) waiting() int64 {
	n := max(b.read-b.handled.Load(), 0)
	b.lost = min(b.lost, n) // written off, then handled after all
	return n - b.lost
}

// waitFor waits until at most limit messages wait for their handlers (or
// ctx ends), and reports false if patience passed without any message
// being handled first.
func (b *backlog) waitFor(ctx context.Context, limit int64, patience time.Duration) bool {
	for b.waiting() > limit {
		seen := b.handled.Load()
		t := time.NewTimer(patience)
		select {
		case <-b.wake:
			t.Stop()
		case <-t.C:
			if b.handled.Load() == seen {
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
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
