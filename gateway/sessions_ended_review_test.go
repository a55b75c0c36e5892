package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// panickyStore is a MemorySessionStore whose LoadSession panics while
// broken is set, as a caller's store with a bug would; panics counts the
// panics it threw.
type panickyStore struct {
	*MemorySessionStore
	broken atomic.Bool
	panics atomic.Int32
}

func (p *panickyStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	if p.broken.Load() {
		p.panics.Add(1)
		panic("the session store broke")
	}
	return p.MemorySessionStore.LoadSession(ctx, id)
}

// TestSharedSessionWatchStorePanics: alice's call runs on replica B, in
// B's copy of her session, so B's poll reads her record from the store
// (the watch of a session with calls in flight); B's store panics on
// every read. The process goes on (the poll runs on the gateway's own
// goroutine, which net/http does not recover: unrecovered, the panic
// ends the test binary), the poll keeps polling, the call is not ended
// (a store that fails is not a session that ended), and once the store
// works again alice's next request on B is answered and her call on B
// ends when she DELETEs the session on A.
func TestSharedSessionWatchStorePanics(t *testing.T) {
	srv, st := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	mem := &MemorySessionStore{}
	onBStore := &panickyStore{MemorySessionStore: mem}
	rs := startReplicasHook(t, []SessionStore{mem, onBStore}, up.URL, Options{extraIdle: 100 * time.Millisecond}, nil)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	s := rawInitialize(t, hc, rs[0].ts.URL+"/mcp", "alice")
	if s.status != http.StatusOK || s.id == "" {
		t.Fatalf("initialize on A: %d %q", s.status, s.body)
	}
	id := s.id
	onA := &rawSession{t: t, url: rs[0].ts.URL + "/mcp", id: id}
	drain(onA.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}

	ended := startSlowCall(t, hc, st, onB.url, id, 7)
	onBStore.broken.Store(true)
	for deadline := time.Now().Add(20 * time.Second); onBStore.panics.Load() < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("B's poll read the record %d times while the store panicked", onBStore.panics.Load())
		}
	}
	onBStore.broken.Store(false)
	callRunsOn(t, st, ended, onB, "after the store panicked")
	deleteOn(t, hc, rs[0].ts.URL+"/mcp", id)
	if b := within(t, ended, 30*time.Second, "the call's POST on B"); strings.Contains(b, "slept") {
		t.Errorf("the call on B was answered as done: %q", b)
	}
}

// TestSharedSessionOtherUserCannotEnd: alice's call runs on replica B,
// in B's copy of her session; bob, who knows her session id, DELETEs it
// on A and on B and posts to it on B. Each is refused 403; her record
// stays, her call is neither cancelled nor answered, and her next
// request on B is answered.
func TestSharedSessionOtherUserCannotEnd(t *testing.T) {
	rs, st, store, id := endedPair(t, false, Options{}, nil)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}
	ended := startSlowCall(t, hc, st, onB.url, id, 7)
	for _, r := range rs {
		req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodDelete, r.ts.URL+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", v1125)
		req.Header.Set("Authorization", "Bearer bob")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if code := drain(resp); code != http.StatusForbidden {
			t.Errorf("bob's DELETE of alice's session: %d, want 403", code)
		}
	}
	if code := drain(onB.postAs(testCtx(t, 10*time.Second), "bob", `{"jsonrpc":"2.0","id":9,"method":"ping"}`)); code != http.StatusForbidden {
		t.Errorf("bob's ping in alice's session on B: %d, want 403", code)
	}
	// B's poll reads her record every period (250 ms): give it three.
	time.Sleep(3 * rs[1].g.shared.pollEvery())
	if b, err := store.LoadSession(testCtx(t, 5*time.Second), id); err != nil || b == nil {
		t.Fatalf("alice's record after bob's DELETEs: %q %v", b, err)
	}
	callRunsOn(t, st, ended, onB, "after bob's DELETEs")
	deleteOn(t, hc, rs[0].ts.URL+"/mcp", id)
	within(t, ended, 30*time.Second, "alice's call on B once she DELETEd her session")
}

// subscribePanics is a MemorySessionStore with notices whose
// SubscribeSessions panics, as a caller's store with a bug may; tries
// counts the subscriptions tried.
type subscribePanics struct {
	*MemorySessionStore
	tries atomic.Int32
}

func (s *subscribePanics) NotifySession(context.Context, string) error { return nil }

func (s *subscribePanics) SubscribeSessions(context.Context) (<-chan string, error) {
	s.tries.Add(1)
	panic("the session store broke subscribing")
}

// TestSharedSessionSubscribePanics: the session store panics each time
// the gateway subscribes to its notices, which it does on a goroutine of
// its own: the process goes on (unrecovered, the panic ends the test
// binary), the gateway tries again after a pause, as after a failure,
// and serves a session meanwhile.
func TestSharedSessionSubscribePanics(t *testing.T) {
	srv, _ := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	store := &subscribePanics{MemorySessionStore: &MemorySessionStore{}}
	rs := startReplicasHook(t, []SessionStore{store}, up.URL, Options{}, nil)
	for deadline := time.Now().Add(20 * time.Second); store.tries.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions tried", store.tries.Load())
		}
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	if s := rawInitialize(t, hc, rs[0].ts.URL+"/mcp", "alice"); s.status != http.StatusOK || s.id == "" {
		t.Fatalf("initialize: %d %q", s.status, s.body)
	}
}

// callRunsOn checks that alice's call, whose POST's end comes on ended,
// still runs when, as the server sees it (no cancellation), and that her
// ping on replica B (onB) is answered.
func callRunsOn(t *testing.T, st *testserver.State, ended <-chan string, onB *rawSession, when string) {
	t.Helper()
	if n := st.Cancellations(); n != 0 {
		t.Errorf("the server saw %d cancellations %s", n, when)
	}
	select {
	case b := <-ended:
		t.Fatalf("alice's call on B ended %s: %.300q", when, b)
	default:
	}
	if code := drain(onB.postAs(testCtx(t, 20*time.Second), "alice", `{"jsonrpc":"2.0","id":8,"method":"ping"}`)); code != http.StatusOK {
		t.Errorf("alice's ping on B %s: %d, want 200", when, code)
	}
}

// deleteOn ends alice's session id with her DELETE at url through hc.
func deleteOn(t *testing.T, hc *http.Client, url, id string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code := drain(resp); code != http.StatusNoContent {
		t.Fatalf("alice's DELETE on %s: %d", url, code)
	}
}
