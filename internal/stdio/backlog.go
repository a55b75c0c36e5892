package stdio

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// backlog holds back a server that floods the client with notifications.
// go-sdk queues every request and notification from the server in an
// unbounded list and hands them to their handlers one at a time, so a
// server that writes faster than they are handled grows that list without
// limit (and go-sdk never shrinks it). The connection counts what it
// passes up, the client's receiving middleware reports what reaches a
// handler (Conn.MessageHandled), and Read stops reading while more than
// maxBacklog are waiting.
//
// It never waits long: after backlogWait without progress (a handler that
// blocks, such as an elicitation waiting for its user, or messages go-sdk
// drops before any handler, which are never counted) it lets the next
// maxBacklog through, so it can slow a server down but not stall it.
type backlog struct {
	read    int64 // requests and notifications passed up; Read's goroutine only
	slack   int64 // of those, the ones given up on; Read's goroutine only
	handled atomic.Int64
	wake    chan struct{}
}

const (
	maxBacklog  = 256
	backlogWait = 20 * time.Millisecond
)

func newBacklog() *backlog { return &backlog{wake: make(chan struct{}, 1)} }

// passUp is called by Read before it returns msg.
func (b *backlog) passUp(ctx context.Context, msg jsonrpc.Message) {
	if _, ok := msg.(*jsonrpc.Request); !ok || b == nil {
		return // responses are not queued
	}
	b.read++
	for b.read-b.handled.Load()-b.slack > maxBacklog {
		t := time.NewTimer(backlogWait)
		select {
		case <-b.wake:
			t.Stop()
		case <-t.C:
			b.slack = b.read - b.handled.Load()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// handledOne is called when a message reaches its handler.
func (b *backlog) handledOne() {
	b.handled.Add(1)
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
