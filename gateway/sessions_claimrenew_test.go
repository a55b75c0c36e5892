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

// keyFailStore is a session store that fails every renewal of the claims
// of one request key (fail), as a store whose shard holding that key is
// down does (a Redis Ring or Cluster with one node lost), and counts the
// renewals it was asked for, by request key.
type keyFailStore struct {
	SessionStore
	fail  string
	mu    sync.Mutex
	tries map[string]int
}

func (s *keyFailStore) RenewRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	if s.tries == nil {
		s.tries = make(map[string]int)
	}
	s.tries[request]++
	s.mu.Unlock()
	if request == s.fail {
		return false, errKilled
	}
	return s.SessionStore.RenewRequest(ctx, session, request, owner, ttl)
}

func (s *keyFailStore) renewals(request string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries[request]
}

// TestSharedSessionClaimRenewPastFailure: alice has two calls in flight
// on A, id 7 and id 8, and A's store fails every renewal of id 7's claim
// only. Id 8's claim is renewed in every round all the same, and id 8
// sent again to B while it runs on A is refused, the server running it
// once: a renewal that fails does not leave the claims after it to
// expire.
func TestSharedSessionClaimRenewPastFailure(t *testing.T) {
	var fa *keyFailStore
	n := 0
	c := newClaimRig(t, func(m *MemorySessionStore) []SessionStore {
		fa = &keyFailStore{SessionStore: m, fail: "n7"}
		return []SessionStore{fa, m}
	}, func(g *Gateway) {
		g.shared.lease = testLease
		g.shared.timeout = 200 * time.Millisecond
		if n == 0 {
			g.shared.warn = func(string, ...any) {}
		}
		n++
	})
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	hold8 := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"hold2","arguments":{}}}`
	on7 := c.send(testCtx(t, 30*time.Second), 0, v1125, holdFast)
	c.started("id 7 on A")
	on8 := c.send(testCtx(t, 30*time.Second), 0, v1125, hold8)
	c.started("id 8 on A")
	const rounds = 12
	waitFor(t, "A's renewal rounds", func() bool { return fa.renewals("n7") >= rounds })
	// Each round tries id 7's claim once; id 8's is renewed in each one
	// (one round may be under way).
	if got, tried := fa.renewals("n8"), fa.renewals("n7"); got < tried-1 {
		t.Errorf("id 8's claim renewed in %d of %d rounds", got, tried)
	}
	select {
	case a := <-c.send(testCtx(t, 30*time.Second), 1, v1125, hold8):
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, "duplicate in-flight request ID") {
			t.Errorf("id 8 again on B while A runs it: %d %q %v, want a duplicate id error", a.status, a.body, a.err)
		}
	case <-c.hold.started:
		t.Errorf("id 8 again on B while A runs it: the server ran it a second time")
		c.hold.release2 <- struct{}{}
	case <-time.After(10 * time.Second):
		t.Fatal("id 8 again on B: no answer")
	}
	c.free()
	answered(t, on7, "id 7's answer")
	select {
	case c.hold.release2 <- struct{}{}:
	case <-time.After(10 * time.Second):
		t.Fatal("no run of hold2 to release")
	}
	answered(t, on8, "id 8's answer")
	if n := c.hold.runs.Load(); n != 2 {
		t.Errorf("the server ran %d calls, want 2", n)
	}
}

// slowRenewStore is a session store whose renewals of claims each take
// delay, well within StoreTimeout, and which counts them.
type slowRenewStore struct {
	SessionStore
	delay time.Duration
	n     atomic.Int64
}

func (s *slowRenewStore) RenewRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	s.n.Add(1)
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return s.SessionStore.RenewRequest(ctx, session, request, owner, ttl)
}

// TestSharedSessionClaimRenewSlowStore: alice has eight calls in flight
// on A, whose store takes a quarter of a lease to renew each claim
// (within StoreTimeout, so each renewal succeeds): a round renewing them
// one after the other would outlast the lease. Every claim is renewed in
// time all the same: A warns of none lost, and each id sent again to B
// while A runs it is refused, the server running each call once.
func TestSharedSessionClaimRenewSlowStore(t *testing.T) {
	const calls, lease = 8, 600 * time.Millisecond
	var sa *slowRenewStore
	var warned warnings
	n := 0
	c := newClaimRig(t, func(m *MemorySessionStore) []SessionStore {
		sa = &slowRenewStore{SessionStore: m, delay: lease / 4}
		return []SessionStore{sa, m}
	}, func(g *Gateway) {
		g.shared.lease = lease
		g.shared.timeout = lease / 2
		if n == 0 {
			g.shared.warn = warned.warn
		}
		n++
	})
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	body := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"hold","arguments":{}}}`
	}
	var onA []<-chan postAnswer
	for id := 1; id <= calls; id++ {
		onA = append(onA, c.send(testCtx(t, 60*time.Second), 0, v1125, body(id)))
		c.started("id " + itoa(id) + " on A")
	}
	// Three rounds of renewals, or a claim lost.
	waitFor(t, "A's renewals", func() bool {
		return sa.n.Load() >= 3*calls || warned.count("expired in the session store") > 0
	})
	if k := warned.count("expired in the session store"); k != 0 {
		t.Errorf("A lost %d claims of its calls in flight: %q", k, warned.msgs)
	}
	for id := 1; id <= calls; id++ {
		c.refused(1, v1125, body(id), "id "+itoa(id)+" again on B while A runs it")
	}
	for range calls {
		c.free()
	}
	for i, ch := range onA {
		answered(t, ch, "id "+itoa(i+1)+" on A")
	}
	if k := c.hold.runs.Load(); k != calls {
		t.Errorf("the server ran %d calls, want %d", k, calls)
	}
}

// TestSharedSessionClaimClientGoneOutlivesLease: alice's call with id 7
// runs on A, on go-sdk's path, and her client goes away; the call runs
// on for several leases of its claim. A renews the claim meanwhile (id 7
// on B is refused, the server running the call once), and releases it
// once go-sdk wrote the call's answer: id 7 then runs on B.
func TestSharedSessionClaimClientGoneOutlivesLease(t *testing.T) {
	c, _, warned := newLeaseRig(t)
	ctx, drop := context.WithCancel(testCtx(t, 30*time.Second))
	defer drop()
	onA := c.send(ctx, 0, v1125, holdSDK)
	c.started("the call on A")
	onPath(t, c.rs[0].g, c.id, true)
	drop()
	if a := within(t, onA, 10*time.Second, "the dropped POST"); a.err == nil {
		t.Fatalf("the dropped POST: %d %q", a.status, a.body)
	}
	for i := range 4 {
		time.Sleep(testLease) // a lease passes
		c.refused(1, v1125, holdFast, "id 7 on B after "+itoa(i+1)+" leases of A's call, its client gone")
	}
	c.free()
	c.unclaimed("id 7 released once go-sdk answered it")
	c.runs(1, v1125, holdFast, "id 7 on B once A answered")
	if n := c.hold.runs.Load(); n != 2 {
		t.Errorf("the server ran %d calls, want 2", n)
	}
	if n := warned[0].count(""); n != 0 {
		t.Errorf("A warned %d times: %q", n, warned[0].msgs)
	}
}
