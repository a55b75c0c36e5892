package storetest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// SessionNotifier is what the gateway uses of a store module's notices
// of changed sessions (gateway.SessionNotifier).
type SessionNotifier interface {
	NotifySession(ctx context.Context, id string) error
	SubscribeSessions(ctx context.Context) (<-chan string, error)
}

// CheckSessionNotices checks a and b, two stores (of two replicas) on one
// server: a notice sent by either reaches every subscription, in order,
// with its id as sent; a flood of notices arrives whole; kill (which
// ends the subscriptions' connections at the server) closes the
// subscriptions' channels, and a subscription made again gets the next
// notices; the end of a subscription's context closes its channel; and
// no goroutine whose stack holds reader is left.
func CheckSessionNotices(t *testing.T, a, b SessionNotifier, reader string, kill func(t *testing.T)) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := countStacks(reader)
	subscribe := func(s SessionNotifier) (<-chan string, context.CancelFunc) {
		t.Helper()
		sctx, scancel := context.WithCancel(ctx)
		ch, err := s.SubscribeSessions(sctx)
		if err != nil {
			scancel()
			t.Fatalf("SubscribeSessions: %v", err)
		}
		return ch, scancel
	}
	want := func(ch <-chan string, ids ...string) {
		t.Helper()
		for _, id := range ids {
			select {
			case got, ok := <-ch:
				if !ok {
					t.Fatalf("the subscription ended; want notice %q", id)
				}
				if got != id {
					t.Fatalf("notice %q, want %q", got, id)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no notice %q within 10 s", id)
			}
		}
	}
	notify := func(s SessionNotifier, ids ...string) {
		t.Helper()
		for _, id := range ids {
			if err := s.NotifySession(ctx, id); err != nil {
				t.Fatalf("NotifySession(%q): %v", id, err)
			}
		}
	}
	ended := func(ch <-chan string, what string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					return
				}
			case <-deadline:
				t.Fatalf("%s: the subscription's channel is still open 20 s later", what)
			}
		}
	}

	chA, cancelA := subscribe(a)
	chB, cancelB := subscribe(b)
	ids := []string{"KX3JQ7ABCDEFGHIJKLMNOPQRST", "second", "a'quote\"and\\back", "ünï"}
	notify(a, ids...)
	want(chA, ids...)
	want(chB, ids...)
	notify(b, "from b")
	want(chA, "from b")
	want(chB, "from b")

	var flood []string
	for i := range 1000 {
		flood = append(flood, fmt.Sprintf("flood-%04d", i))
	}
	notify(a, flood...)
	want(chB, flood...)
	want(chA, flood...)

	kill(t)
	ended(chA, "a's subscription after its connection was killed")
	ended(chB, "b's subscription after its connection was killed")
	cancelA()
	cancelB()
	chB, cancelB = subscribe(b)
	notify(a, "after the kill")
	want(chB, "after the kill")

	cancelB()
	ended(chB, "a subscription whose context ended")
	for deadline := time.Now().Add(10 * time.Second); countStacks(reader) > before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines in %s left after the subscriptions ended", countStacks(reader)-before, reader)
		}
	}
}

// countStacks counts the goroutines whose stack holds s.
func countStacks(s string) int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, s) {
			n++
		}
	}
	return n
}
