package mcpadapter_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestCloseTellsServerOfCallsInFlight closes a Client while calls of a
// handshake-era server over streamable HTTP run: each call returns, and
// on the fast path the server is told of every one (its handlers end)
// before Close returns or soon after. Built without the fast path
// (go-sdk's path), the calls must return; go-sdk's notices are its own,
// best-effort, and only logged here.
func TestCloseTellsServerOfCallsInFlight(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	for round := range 5 {
		srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
		hs := testserver.StartStreamable(t, srv)
		c, err := mcpadapter.NewClient(hs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		const calls = 3
		ended := make(chan error, calls)
		for range calls {
			go func() {
				_, err := c.CallTool(ctx, "slow", json.RawMessage(`{"ms":60000}`), nil)
				ended <- err
			}()
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := state.Wait(wctx, func(s *testserver.State) bool { return s.Calls("slow") == calls }); err != nil {
			cancel()
			t.Fatalf("round %d: the calls never reached the server: %v", round, err)
		}
		cancel()
		if err := c.Close(); err != nil {
			t.Errorf("round %d: Close: %v", round, err)
		}
		for range calls {
			select {
			case err := <-ended:
				if err == nil {
					t.Errorf("round %d: a call in flight at Close succeeded", round)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: a call in flight at Close did not return", round)
			}
		}
		wctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		err = state.Wait(wctx, func(s *testserver.State) bool { return s.Cancellations() == calls })
		cancel()
		switch {
		case err == nil:
		case mcpadapter.FastPathBuilt:
			t.Fatalf("round %d: the server was told of %d of the %d calls in flight at Close", round, state.Cancellations(), calls)
		default:
			// On go-sdk's path go-sdk sends notifications/cancelled
			// itself, on a goroutine of its own, best-effort: closing
			// the connection may come first (1 of 3 once, under load).
			t.Logf("round %d: go-sdk's path told the server of %d of the %d calls in flight at Close", round, state.Cancellations(), calls)
		}
	}
}
