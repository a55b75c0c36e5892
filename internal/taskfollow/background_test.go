package taskfollow

import (
	"context"
	"testing"
	"time"
)

// TestBackgroundStopWaits: Stop ends the context of the work running
// then, and its wait returns only once that work has returned; work
// begun after a Stop gets a live context of its own.
func TestBackgroundStopWaits(t *testing.T) {
	t.Parallel()
	var b Background
	b.Stop()() // nothing runs: returns at once
	returned := make(chan struct{})
	started := make(chan struct{})
	b.Run(func(life context.Context) {
		close(started)
		<-life.Done()
		time.Sleep(10 * time.Millisecond) // work that takes a moment to wind down
		close(returned)
	})
	<-started
	wait := b.Stop()
	wait()
	select {
	case <-returned:
	default:
		t.Fatal("Stop's wait returned before the work did")
	}
	live := make(chan error, 1)
	b.Run(func(life context.Context) { live <- life.Err() })
	if err := <-live; err != nil {
		t.Errorf("work begun after Stop: its context is already over (%v)", err)
	}
	b.Stop()()
}
