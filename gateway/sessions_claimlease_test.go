package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testLease is the lease of claims in these tests: renewed every 100 ms.
const testLease = 300 * time.Millisecond

// leaseStore is a session store whose renewals of claims fail
// (failRenew), whose releases of claims fail (failRelease), or whose
// claims are written only once their caller stopped waiting (late: the
// write lands after StoreTimeout).
type leaseStore struct {
	SessionStore
	failRenew, failRelease, late atomic.Bool
}

func (s *leaseStore) ClaimRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	if s.late.Load() {
		<-ctx.Done()
		_, _ = s.SessionStore.ClaimRequest(context.Background(), session, request, owner, ttl)
		return false, ctx.Err()
	}
	return s.SessionStore.ClaimRequest(ctx, session, request, owner, ttl)
}

func (s *leaseStore) RenewRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	if s.failRenew.Load() {
		return false, errKilled
	}
	return s.SessionStore.RenewRequest(ctx, session, request, owner, ttl)
}

func (s *leaseStore) ReleaseRequest(ctx context.Context, session, request, owner string) error {
	if s.failRelease.Load() {
		return errKilled
	}
	return s.SessionStore.ReleaseRequest(ctx, session, request, owner)
}

// warnings records what a replica logged through sharedSessions.warn.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warn(msg string, _ ...any) {
	w.mu.Lock()
	w.msgs = append(w.msgs, msg)
	w.mu.Unlock()
}

// count returns how many of the warnings hold s.
func (w *warnings) count(s string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// newLeaseRig is a claimRig whose replicas A and B each have a leaseStore
// over the shared MemorySessionStore, claims leased for testLease, and
// their warnings recorded.
func newLeaseRig(t *testing.T) (c *claimRig, stores [2]*leaseStore, warned [2]*warnings) {
	t.Helper()
	n := 0
	c = newClaimRig(t, func(m *MemorySessionStore) []SessionStore {
		stores = [2]*leaseStore{{SessionStore: m}, {SessionStore: m}}
		return []SessionStore{stores[0], stores[1]}
	}, func(g *Gateway) {
		warned[n] = &warnings{}
		g.shared.warn = warned[n].warn
		g.shared.lease = testLease
		g.shared.timeout = 200 * time.Millisecond
		n++
	})
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return c, stores, warned
}

// runsOnceFree sends body to replica until the server runs it, a refusal
// as a duplicate in-flight id meaning its claim is still there, for 10 s
// at most; it returns the POST's answer, to come once the run is
// released.
func (c *claimRig) runsOnceFree(replica int, body, what string) <-chan postAnswer {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ch := c.send(testCtx(c.t, 30*time.Second), replica, v1125, body)
		select {
		case <-c.hold.started:
			return ch
		case a := <-ch:
			if a.status != http.StatusBadRequest || !strings.Contains(a.body, "duplicate in-flight request ID") {
				c.t.Fatalf("%s: %d %q %v, want it run (or refused as in flight meanwhile)", what, a.status, a.body, a.err)
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("%s: still refused as in flight after 10 s", what)
			}
			time.Sleep(20 * time.Millisecond)
		case <-time.After(10 * time.Second):
			c.t.Fatalf("%s: no answer", what)
		}
	}
}

// answered waits for the answer on ch and fails the test unless it is a
// run of hold's.
func answered(t *testing.T, ch <-chan postAnswer, what string) {
	t.Helper()
	if a := within(t, ch, 10*time.Second, what); a.status != http.StatusOK || !strings.Contains(a.body, "held run") {
		t.Errorf("%s: %d %q %v", what, a.status, a.body, a.err)
	}
}

// TestSharedSessionClaimOutlivesLease: alice's call with id 7 runs on A,
// on either path, for several leases of its claim: A renews the claim,
// and id 7 sent again to B meanwhile is refused as in flight, the server
// running the call once. Once A answered, id 7 runs on B.
func TestSharedSessionClaimOutlivesLease(t *testing.T) {
	for _, path := range []string{"fast", "go-sdk"} {
		t.Run(path, func(t *testing.T) {
			c, _, warned := newLeaseRig(t)
			onA := c.send(testCtx(t, 30*time.Second), 0, v1125, holdPaths[path])
			c.started("the call on A")
			for i := range 4 {
				time.Sleep(testLease) // a lease passes
				c.refused(1, v1125, holdFast, "id 7 on B after "+itoa(i+1)+" leases of A's call")
			}
			if n := c.hold.runs.Load(); n != 1 {
				t.Errorf("the server ran the call %d times, want once", n)
			}
			c.free()
			answered(t, onA, "A's answer")
			c.unclaimed("id 7 released once A answered")
			c.runs(1, v1125, holdFast, "id 7 on B once A answered")
			c.unclaimed("id 7 released once B answered")
			if n := warned[0].count(""); n != 0 {
				t.Errorf("A warned %d times: %q", n, warned[0].msgs)
			}
		})
	}
}

// TestSharedSessionClaimLeftBehind: a claim no replica holds any more
// blocks its id for a lease at most: one whose release failed (A's
// store failing then), one A's store wrote after A stopped waiting for it
// (the POST answered 503), and the claims of a replica closed with its
// store failing: id 7 sent again afterwards runs.
func TestSharedSessionClaimLeftBehind(t *testing.T) {
	t.Run("release failed", func(t *testing.T) {
		c, stores, warned := newLeaseRig(t)
		stores[0].failRelease.Store(true)
		c.runs(0, v1125, holdFast, "id 7 on A")
		if n := warned[0].count("failed to release"); n != 1 {
			t.Errorf("A warned of %d failed releases: %q", n, warned[0].msgs)
		}
		stores[0].failRelease.Store(false)
		for r, where := range []string{"A", "B"} {
			ch := c.runsOnceFree(r, holdFast, "id 7 again on "+where)
			c.free()
			answered(t, ch, "id 7 again on "+where)
		}
		c.unclaimed("no claim left")
	})
	t.Run("written late", func(t *testing.T) {
		c, stores, _ := newLeaseRig(t)
		stores[1].late.Store(true)
		select {
		case a := <-c.send(testCtx(t, 30*time.Second), 1, v1125, holdFast):
			if a.status != http.StatusServiceUnavailable {
				t.Fatalf("id 7 on B, its claim written late: %d %q %v, want 503", a.status, a.body, a.err)
			}
		case <-c.hold.started:
			t.Fatal("id 7 on B ran unclaimed")
		case <-time.After(10 * time.Second):
			t.Fatal("id 7 on B: no answer")
		}
		waitFor(t, "the claim written late", func() bool {
			c.store.mu.Lock()
			defer c.store.mu.Unlock()
			return len(c.store.claims) == 1
		})
		stores[1].late.Store(false)
		ch := c.runsOnceFree(1, holdFast, "id 7 again on B")
		c.free()
		answered(t, ch, "id 7 again on B")
		c.unclaimed("no claim left")
	})
	t.Run("replica closed", func(t *testing.T) {
		c, stores, _ := newLeaseRig(t)
		ctx, drop := context.WithCancel(testCtx(t, 30*time.Second))
		onA := c.send(ctx, 0, v1125, holdFast)
		c.started("the call on A")
		drop()
		within(t, onA, 10*time.Second, "the dropped POST")
		stores[0].failRelease.Store(true)
		closed := make(chan error, 1)
		go func() { closed <- c.rs[0].g.Close() }()
		within(t, closed, 20*time.Second, "A's Close")
		ch := c.runsOnceFree(1, holdFast, "id 7 on B once A closed")
		c.free()
		answered(t, ch, "id 7 on B once A closed")
		c.unclaimed("no claim left")
	})
}

// TestSharedSessionClaimExpiredOwner: A's store fails to renew the claim
// of alice's call with id 7, which expires; id 7 sent again to B runs
// there (a call running longer than a lease without renewals outlives
// its claim). When A's call ends, A's release leaves B's claim: id 7 sent
// a third time is refused. When A's renewal reaches the store again, it
// finds its claim gone: A warns once and forgets it, and B's claim stays.
func TestSharedSessionClaimExpiredOwner(t *testing.T) {
	hold2 := strings.Replace(holdFast, `"hold"`, `"hold2"`, 1)
	for _, when := range []string{"released", "renewed"} {
		t.Run(when, func(t *testing.T) {
			c, stores, warned := newLeaseRig(t)
			stores[0].failRenew.Store(true)
			onA := c.send(testCtx(t, 30*time.Second), 0, v1125, holdFast)
			c.started("the call on A")
			onB := c.runsOnceFree(1, hold2, "id 7 on B once A's claim expired")
			if when == "renewed" {
				stores[0].failRenew.Store(false)
				waitFor(t, "A's warning of its claim lost", func() bool { return warned[0].count("expired in the session store") > 0 })
			}
			c.free() // A's run
			answered(t, onA, "A's answer")
			c.refused(0, v1125, holdFast, "id 7 on A while B runs it")
			c.refused(1, v1125, holdFast, "id 7 on B while B runs it")
			stores[0].failRenew.Store(false)
			time.Sleep(testLease) // A renews what it holds, three times
			c.refused(0, v1125, holdFast, "id 7 on A once A's renewals work")
			if n := c.hold.runs.Load(); n != 2 {
				t.Errorf("the server ran %d calls, want 2", n)
			}
			if n := warned[0].count("expired in the session store"); n != map[string]int{"released": 0, "renewed": 1}[when] {
				t.Errorf("A warned %d times of its claim lost: %q", n, warned[0].msgs)
			}
			select {
			case c.hold.release2 <- struct{}{}:
			case <-time.After(10 * time.Second):
				t.Fatal("no run of hold2 to release")
			}
			answered(t, onB, "B's answer")
			c.unclaimed("no claim left")
		})
	}
}

// TestSharedSessionClaimLeaseBounds: a claim's lease is claimLease, at
// least ten store timeouts, and never longer than the record of its
// session lives; the owners of claims differ.
func TestSharedSessionClaimLeaseBounds(t *testing.T) {
	for _, c := range []struct {
		timeout, ttl, want time.Duration
	}{
		{time.Second, DefaultSessionTTL, claimLease},
		{time.Minute, DefaultSessionTTL, 10 * time.Minute},
		{time.Second, time.Minute, time.Minute + 15*time.Second},
	} {
		s, err := newSharedSessions(&SessionOptions{Store: &MemorySessionStore{}, StoreTimeout: c.timeout, TTL: c.ttl}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.leaseTTL(); got != c.want {
			t.Errorf("StoreTimeout %s, TTL %s: lease %s, want %s", c.timeout, c.ttl, got, c.want)
		}
		if a, b := s.claimOwner(), s.claimOwner(); a == b || len(a) > 64 {
			t.Errorf("owners %q and %q", a, b)
		}
	}
}
