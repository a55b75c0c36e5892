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
// the server is told of every one (its handlers end) before Close
// returns or soon after, whichever path (fast or go-sdk's) the calls took.
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
		if err != nil {
			t.Fatalf("round %d: the server was told of %d of the %d calls in flight at Close", round, state.Cancellations(), calls)
		}
	}
}
