package park

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitTimedOutHasEnded: a wait that runs past its limit cancels the
// call and returns only once the call has returned (its goroutine has
// ended and it has left its lane), even when the call takes a while to
// return after its cancellation.
func TestWaitTimedOutHasEnded(t *testing.T) {
	tb := New[string](time.Minute, slog.New(slog.DiscardHandler), describe)
	p := NewCall[string]("srv", "tool", "alice", "", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if q, err := tb.Begin(ctx, nil, p, ""); err != nil || q != "" {
		t.Fatalf("begin: %q %v", q, err)
	}
	var returned atomic.Bool
	release := make(chan struct{})
	tb.Run(ctx, p, func(ctx context.Context) Outcome[string] {
		<-ctx.Done()
		<-release // slow to return after its cancellation
		returned.Store(true)
		return Outcome[string]{Err: ctx.Err()}
	})
	w := make(chan Waited[string], 1)
	go func() { w <- tb.Wait(ctx, p, time.Millisecond) }()
	select {
	case got := <-w:
		t.Fatalf("the wait returned %+v before the call returned", got)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	got := <-w
	if !got.TimedOut || !returned.Load() {
		t.Fatalf("wait: %+v, call returned: %v", got, returned.Load())
	}
	if tb.Lookup(p.ID) != nil {
		t.Fatal("the call is still in the table after its wait timed out")
	}
}
