package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLimitsRefusedCallsBillNoOne: a limit shared by everyone and a
// smaller one per principal. Mallory floods: her calls over her own limit
// are refused, and they must not use up the shared limit, whatever the
// order of the rules, or bob is refused for mallory's refused calls.
func TestLimitsRefusedCallsBillNoOne(t *testing.T) {
	shared := LimitRule{Name: "everyone", Rate: 5, Period: time.Hour}
	own := LimitRule{Name: "per-user", Per: "principal", Rate: 2, Period: time.Hour}
	for name, rules := range map[string][]LimitRule{"shared first": {shared, own}, "own first": {own, shared}} {
		// Bob and alice have their own limits too.
		t.Run(name, func(t *testing.T) {
			e := newLimitEnv(t)
			url := e.replica(&Limits{Rules: rules})
			ctx := testCtx(t, 30*time.Second)
			mallory, bob := e.client(url, "mallory"), e.client(url, "bob")
			passed := 0
			for range 20 {
				if call(t, ctx, mallory, "echo") == nil {
					passed++
				}
			}
			if passed != 2 {
				t.Errorf("mallory's 20 calls: %d passed, want 2 (her own limit)", passed)
			}
			// 3 of the shared limit's 5 are left: 2 for bob, 1 for alice.
			alice := e.client(url, "alice")
			for i, cs := range []*mcp.ClientSession{bob, bob, alice} {
				if we := call(t, ctx, cs, "echo"); we != nil {
					t.Fatalf("call %d of the 3 left of the shared limit: %v", i+1, we)
				}
			}
			if we := call(t, ctx, alice, "echo"); we == nil || we.Code != CodeLimited {
				t.Errorf("a 6th call under the shared limit: %v, want CodeLimited", we)
			}
		})
	}
}

// TestLimitsRetryAfterIsTrue: a client refused by a rate limit that waits
// the retryAfterMs it was given, and no longer, then succeeds.
func TestLimitsRetryAfterIsTrue(t *testing.T) {
	e := newLimitEnv(t)
	url := e.replica(&Limits{Rules: []LimitRule{{Name: "slow", Per: "principal", Rate: 4, Period: 2 * time.Second, Burst: 1}}})
	ctx := testCtx(t, 30*time.Second)
	alice := e.client(url, "alice")
	if we := call(t, ctx, alice, "echo"); we != nil {
		t.Fatalf("alice's first call: %v", we)
	}
	for i := range 3 {
		we := call(t, ctx, alice, "echo")
		if we == nil {
			// The interval passed between the two calls: try again.
			continue
		}
		d := limitData(t, we)
		if d.Kind != "rate" || d.RetryAfterMs > 500 {
			t.Fatalf("refusal %d: %+v, want a rate refusal within the 500 ms interval", i, d)
		}
		time.Sleep(time.Duration(d.RetryAfterMs) * time.Millisecond)
		if we := call(t, ctx, alice, "echo"); we != nil {
			t.Fatalf("after waiting the %d ms it was told: %v", d.RetryAfterMs, we)
		}
	}
}

// TestLimitsCancelledCallGivesSlotBack: a hostile client with a cap of one
// call in flight starts a call that never ends, then cancels it: the slot
// comes back at once (not after the lease's TTL), so its next call runs.
func TestLimitsCancelledCallGivesSlotBack(t *testing.T) {
	e := newLimitEnv(t)
	url := e.replica(&Limits{Rules: []LimitRule{{Name: "one", Per: "principal", Concurrent: 1}}, LeaseTTL: time.Hour})
	ctx := testCtx(t, 30*time.Second)
	mallory := e.client(url, "mallory")
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := mallory.CallTool(cctx, &mcp.CallToolParams{Name: "hold"})
		done <- err
	}()
	select {
	case <-e.started:
	case <-ctx.Done():
		t.Fatal("the hold did not start")
	}
	if we := call(t, ctx, e.client(url, "mallory"), "echo"); we == nil || we.Code != CodeLimited {
		t.Fatalf("a second call while one is in flight: %v, want CodeLimited", we)
	}
	cancel()
	<-done
	// The gateway ends the call when the client's cancel arrives; its
	// slot is given back then. Bounded polling: the cancel is a
	// notification, handled after CallTool returned here.
	for i := 0; ; i++ {
		we := call(t, ctx, mallory, "echo")
		if we == nil {
			break
		}
		if i == 200 {
			t.Fatalf("after the cancel: %v", we)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLimitsLongCallKeepsSlot: a call that runs for many lease TTLs keeps
// its slot (its replica renews the lease): a second call is refused all
// along, and runs once the first ends.
func TestLimitsLongCallKeepsSlot(t *testing.T) {
	e := newLimitEnv(t)
	ttl := time.Second
	url := e.replica(&Limits{Rules: []LimitRule{{Name: "one", Per: "principal", Concurrent: 1}}, LeaseTTL: ttl})
	ctx := testCtx(t, 30*time.Second)
	alice := e.client(url, "alice")
	held := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "hold"})
		held <- err
	}()
	select {
	case <-e.started:
	case <-ctx.Done():
		t.Fatal("the hold did not start")
	}
	other := e.client(url, "alice")
	for i := range 3 {
		if we := call(t, ctx, other, "echo"); we == nil || we.Code != CodeLimited {
			t.Fatalf("a second call, %d lease TTLs into the first: %v, want CodeLimited", i, we)
		}
		time.Sleep(ttl)
	}
	e.finish <- struct{}{}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if we := call(t, ctx, other, "echo"); we != nil {
		t.Fatalf("after the first call ended: %v", we)
	}
}

// TestLimitsRefusedCallHoldsNoSlot: a cap on all calls and a smaller one on
// one tool. While alice holds the tool's one slot, mallory's calls of it
// are refused, and each gives back the slot of the cap on all calls it
// took first: bob's calls still run.
func TestLimitsRefusedCallHoldsNoSlot(t *testing.T) {
	e := newLimitEnv(t)
	url := e.replica(&Limits{Rules: []LimitRule{{Name: "all", Concurrent: 3}, {Name: "holds", Tool: "hold", Concurrent: 1}}, LeaseTTL: time.Hour})
	ctx := testCtx(t, 30*time.Second)
	held := make(chan error, 1)
	go func() {
		_, err := e.client(url, "alice").CallTool(ctx, &mcp.CallToolParams{Name: "hold"})
		held <- err
	}()
	select {
	case <-e.started:
	case <-ctx.Done():
		t.Fatal("the hold did not start")
	}
	mallory := e.client(url, "mallory")
	for i := range 5 {
		if we := call(t, ctx, mallory, "hold"); we == nil || we.Code != CodeLimited {
			t.Fatalf("mallory's hold %d: %v, want CodeLimited", i, we)
		}
	}
	if we := call(t, ctx, e.client(url, "bob"), "echo"); we != nil {
		t.Errorf("bob's call after mallory's refused ones: %v", we)
	}
	e.finish <- struct{}{}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}
