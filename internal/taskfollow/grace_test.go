package taskfollow

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLateWaitAbandonsAtLifeEnd: a request whose caller's context ended
// is waited for in the background; when the waiter's life ends first
// (the client is closed), the request's context is cancelled with the
// cause of the caller's context, and Wait returns what it then returned.
func TestLateWaitAbandonsAtLifeEnd(t *testing.T) {
	t.Parallel()
	why := errors.New("the caller gave up")
	ctx, cancel := context.WithCancelCause(context.Background())
	started := make(chan struct{})
	go func() { <-started; cancel(why) }()
	late, _, err := Send(ctx, func(sctx context.Context) (string, error) {
		close(started)
		<-sctx.Done() // a server that never answers
		return "", context.Cause(sctx)
	})
	if late == nil || err != nil {
		t.Fatalf("Send: late %v, err %v", late, err)
	}
	life, stop := context.WithCancel(context.Background())
	stop() // the client is closed
	got := make(chan Answer[string], 1)
	go func() { got <- late.Wait(life) }()
	select {
	case a := <-got:
		if !errors.Is(a.Err, why) {
			t.Fatalf("the abandoned request returned %v, want the caller's cause", a.Err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not abandon the request when its life ended")
	}
}
