package stdio

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestBacklog: Read is held back while too many messages wait for their
// handlers, let go as they are handled, and never stalled by a handler
// that does not move. The clock is synctest's: the waits are exact.
func TestBacklog(t *testing.T) {
	t.Parallel()
	note := &jsonrpc.Request{Method: "notifications/message"}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		// Nothing is handled: every maxBacklog messages cost one backlogWait.
		b := newBacklog()
		start := time.Now()
		for range 3 * maxBacklog {
			b.passUp(ctx, note)
		}
		if d := time.Since(start); d != 2*backlogWait {
			t.Errorf("3×maxBacklog unhandled messages took %v; want 2×%v", d, backlogWait)
		}

		// Handled as they come: no waiting.
		b = newBacklog()
		start = time.Now()
		for range 4 * maxBacklog {
			b.passUp(ctx, note)
			b.handledOne()
		}
		if d := time.Since(start); d != 0 {
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
		if d := time.Since(start); d != 2*time.Millisecond {
			t.Errorf("woke after %v, want 2ms", d)
		}

		// A nil backlog is a no-op.
		var none *backlog
		none.passUp(ctx, note)
	})
}
