package stdio

import (
	"context"
	"encoding/json"
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
		b := newBacklog(false)
		start := time.Now()
		for range 3 * maxBacklog {
			b.passUp(ctx, note)
		}
		if d := time.Since(start); d != 2*backlogWait {
			t.Errorf("3×maxBacklog unhandled messages took %v; want 2×%v", d, backlogWait)
		}

		// Handled as they come: no waiting.
		b = newBacklog(false)
		start = time.Now()
		for range 4 * maxBacklog {
			b.passUp(ctx, note)
			b.handledOne()
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("handled messages waited %v", d)
		}

		// A waiting Read wakes as soon as one is handled.
		b = newBacklog(false)
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
		none.sent(call(t, 1, true))
	})
}

// mustID makes a request id.
func mustID(t *testing.T, n int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// call is a tools/call request, with a progress token or without.
func call(t *testing.T, id int64, progress bool) *jsonrpc.Request {
	params := `{"name":"echo"}`
	if progress {
		params = `{"name":"echo","_meta":{"progressToken":"t"}}`
	}
	return &jsonrpc.Request{ID: mustID(t, id), Method: "tools/call", Params: json.RawMessage(params)}
}

// TestBacklogHoldsProgressResults: the result of a call sent with a
// progress token comes after a barrier when notifications wait, and Read
// returns it once the client reached the barrier; other responses do not
// wait; a handler that does not move holds it for responseTicks ticks at
// most. The clock is synctest's.
func TestBacklogHoldsProgressResults(t *testing.T) {
	t.Parallel()
	note := &jsonrpc.Request{Method: "notifications/progress"}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newBacklog(true)
		b.sent(call(t, 1, true))
		b.sent(call(t, 2, false))
		for range 10 {
			b.passUp(ctx, note)
		}
		if barrier := b.barrierFor(&jsonrpc.Response{ID: mustID(t, 2)}); barrier != nil {
			t.Errorf("a call without a progress token got a barrier")
		}
		barrier := b.barrierFor(&jsonrpc.Response{ID: mustID(t, 1)})
		if barrier == nil || barrier.Method != "notifications/progress" || barrier.IsCall() {
			t.Fatalf("barrier %+v, want a progress notification", barrier)
		}
		var p struct{ ProgressToken any }
		if err := json.Unmarshal(barrier.Params, &p); err != nil {
			t.Fatal(err)
		}
		if b.barrier("mcpadapter-barrier-0000000000000000-1") || b.barrier(1.0) {
			t.Error("a token not of this connection was taken for a barrier")
		}
		// The handler takes 1 ms for each notification, then reaches the
		// barrier.
		go func() {
			for range 10 {
				time.Sleep(time.Millisecond)
				b.handledOne()
			}
			if !b.barrier(p.ProgressToken) {
				t.Errorf("the barrier's token %v was not recognised", p.ProgressToken)
			}
			b.handledOne() // as the middleware does for every notification
		}()
		start := time.Now()
		b.awaitBarrier(ctx)
		if d := time.Since(start); d != 10*time.Millisecond {
			t.Errorf("the progress call's result came after %v, want 10ms (when its notifications were handled)", d)
		}

		// Nothing waits: no barrier.
		b.sent(call(t, 3, true))
		if barrier := b.barrierFor(&jsonrpc.Response{ID: mustID(t, 3)}); barrier != nil {
			t.Errorf("a barrier with nothing waiting")
		}

		// Nothing moves: the result is let go after responseTicks ticks.
		b.sent(call(t, 4, true))
		b.passUp(ctx, note)
		if b.barrierFor(&jsonrpc.Response{ID: mustID(t, 4)}) == nil {
			t.Fatal("no barrier")
		}
		start = time.Now()
		b.awaitBarrier(ctx)
		if d, want := time.Since(start), responseTicks*responseTick; d != want {
			t.Errorf("a stalled handler held the result %v, want %v", d, want)
		}

		// A handler that moves, however slowly, is waited for.
		b = newBacklog(true)
		b.sent(call(t, 5, true))
		for range 3 {
			b.passUp(ctx, note)
		}
		barrier = b.barrierFor(&jsonrpc.Response{ID: mustID(t, 5)})
		if err := json.Unmarshal(barrier.Params, &p); err != nil {
			t.Fatal(err)
		}
		go func() {
			for range 3 {
				time.Sleep(responseTicks * responseTick / 2)
				b.handledOne()
			}
			b.barrier(p.ProgressToken)
			b.handledOne()
		}()
		start = time.Now()
		b.awaitBarrier(ctx)
		if d, want := time.Since(start), 3*responseTicks*responseTick/2; d != want {
			t.Errorf("a slow handler: the result came after %v, want %v", d, want)
		}

		// A cancelled context ends the wait.
		b.sent(call(t, 6, true))
		b.passUp(ctx, note)
		b.barrierFor(&jsonrpc.Response{ID: mustID(t, 6)})
		cctx, cancel := context.WithTimeout(ctx, 7*time.Millisecond)
		defer cancel()
		start = time.Now()
		b.awaitBarrier(cctx)
		if d := time.Since(start); d != 7*time.Millisecond {
			t.Errorf("a cancelled wait took %v, want 7ms", d)
		}
	})
}
