package stdio

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestBacklog: Read is held back while too many messages wait for their
// handlers, let go as they are handled, and never stalled by a handler
// that does not move.
func TestBacklog(t *testing.T) {
	ctx := context.Background()
	note := &jsonrpc.Request{Method: "notifications/message"}
	b := newBacklog()

	// Nothing is handled: every maxBacklog messages cost one backlogWait.
	start := time.Now()
	for range 3 * maxBacklog {
		b.passUp(ctx, note)
	}
	if d := time.Since(start); d < 2*backlogWait || d > 2*time.Second {
		t.Errorf("3×maxBacklog unhandled messages took %v; want about 2×%v", d, backlogWait)
	}

	// Handled as they come: no waiting.
	b = newBacklog()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 4 * maxBacklog {
			b.handledOne()
		}
	}()
	<-done
	start = time.Now()
	for range 4 * maxBacklog {
		b.passUp(ctx, note)
	}
	if d := time.Since(start); d > backlogWait {
		t.Errorf("handled messages waited %v", d)
	}

	// A waiting Read wakes as soon as one is handled.
	b = newBacklog()
	for range maxBacklog {
		b.passUp(ctx, note)
	}
	go func() {
		time.Sleep(2 * time.Millisecond)
		b.handledOne()
	}()
	start = time.Now()
	b.passUp(ctx, note)
	if d := time.Since(start); d >= backlogWait {
		t.Errorf("woke after %v, want before %v", d, backlogWait)
	}

	// Responses are not counted; a nil backlog is a no-op.
	b.passUp(ctx, &jsonrpc.Response{})
	var none *backlog
	none.passUp(ctx, note)
}
