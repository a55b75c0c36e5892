package mcpadapter

import (
	"context"
	"testing"
	"time"
)

// TestBackgroundStopWaits: stop ends the context of the work running
// then, and its wait returns only once that work has returned; work
// begun after a stop gets a live context of its own.
func TestBackgroundStopWaits(t *testing.T) {
	t.Parallel()
	var b background
	b.stop()() // nothing runs: returns at once
	returned := make(chan struct{})
	started := make(chan struct{})
	b.run(func(life context.Context) {
		close(started)
		<-life.Done()
		time.Sleep(10 * time.Millisecond) // work that takes a moment to wind down
		close(returned)
	})
	<-started
	wait := b.stop()
	wait()
	select {
	case <-returned:
	default:
		t.Fatal("stop's wait returned before the work did")
	}
	live := make(chan error, 1)
	b.run(func(life context.Context) { live <- life.Err() })
	if err := <-live; err != nil {
		t.Errorf("work begun after stop: its context is already over (%v)", err)
	}
	b.stop()()
}
