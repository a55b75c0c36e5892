package replicatest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
)

// claimPost posts body in session id at url as alice, in the background,
// and sends its status and body (or the error) on the channel returned.
func claimPost(ctx context.Context, url, id, body string) <-chan string {
	ch := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+limitKeys["alice"])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- resp.Status + " " + string(b)
	}()
	return ch
}

// TestSharedSessionClaimStores: over a session store on a real server,
// alice's call under id "retry-7" is in flight on replica A; the same id
// sent to replica B is refused as a duplicate in-flight id, the server
// running the call once; once A answered, the id runs on B.
func TestSharedSessionClaimStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			e := newLimitEnv(t)
			store, _ := stores[name]()
			urlA, urlB := e.sessionReplica(store), e.sessionReplica(store)
			id := e.client(urlA, "alice").ID()
			const call = `{"jsonrpc":"2.0","id":"retry-7","method":"tools/call","params":{"name":"hold","arguments":{}}}`
			ctx := limitCtx(t, 60*time.Second)
			onA := claimPost(ctx, urlA, id, call)
			wait := func(ch <-chan struct{}, what string) {
				t.Helper()
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("no %s", what)
				}
			}
			wait(e.started, "run of the call on A")
			select {
			case got := <-claimPost(ctx, urlB, id, call):
				if !strings.HasPrefix(got, "400") || !strings.Contains(got, "duplicate in-flight request ID") {
					t.Errorf("the id again on B: %s, want 400 and a duplicate id error", got)
				}
			case <-e.started:
				t.Error("the server ran the call a second time, on B")
				e.finish <- struct{}{}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer from B")
			}
			e.finish <- struct{}{}
			if got := <-onA; !strings.HasPrefix(got, "200") || !strings.Contains(got, "held") {
				t.Fatalf("A's answer: %s", got)
			}
			// A releases the claim once its answer is written: B runs the
			// id then (a refusal meanwhile is the claim not yet released).
			deadline := time.Now().Add(10 * time.Second)
			for {
				ch := claimPost(ctx, urlB, id, call)
				select {
				case <-e.started:
					e.finish <- struct{}{}
					if got := <-ch; !strings.HasPrefix(got, "200") || !strings.Contains(got, "held") {
						t.Fatalf("B's answer: %s", got)
					}
					return
				case got := <-ch:
					if !strings.Contains(got, "duplicate in-flight request ID") || time.Now().After(deadline) {
						t.Fatalf("the id on B once A answered: %s", got)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// releaseFails is a session store whose releases of claims fail once
// fail is set.
type releaseFails struct {
	gateway.SessionStore
	fail atomic.Bool
}

func (s *releaseFails) ReleaseRequest(ctx context.Context, session, request, owner string) error {
	if s.fail.Load() {
		return errors.New("the store is down")
	}
	return s.SessionStore.ReleaseRequest(ctx, session, request, owner)
}

// TestSharedSessionClaimLeaseStores: over a session store on a real
// server, with a sessions' TTL that makes the lease of a claim 1 s
// (the TTL plus a quarter), alice's call under id "retry-8" runs on
// replica A for three leases: A renews its claim, and the id sent to B
// then is refused as in flight, the server running the call once. A's
// store fails when A releases the claim: the claim is left, and the id
// runs on B within a lease or so.
func TestSharedSessionClaimLeaseStores(t *testing.T) {
	const ttl = 800 * time.Millisecond // a lease of 1 s
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			e := newLimitEnv(t)
			store, _ := stores[name]()
			a := &releaseFails{SessionStore: store}
			urlA, urlB := e.sessionReplicaTTL(a, ttl), e.sessionReplicaTTL(store, ttl)
			id := e.client(urlA, "alice").ID()
			const call = `{"jsonrpc":"2.0","id":"retry-8","method":"tools/call","params":{"name":"hold","arguments":{}}}`
			ctx := limitCtx(t, 60*time.Second)
			onA := claimPost(ctx, urlA, id, call)
			wait := func(ch <-chan struct{}, what string) {
				t.Helper()
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("no %s", what)
				}
			}
			wait(e.started, "run of the call on A")
			time.Sleep(3 * ttl * 5 / 4) // three leases pass
			select {
			case got := <-claimPost(ctx, urlB, id, call):
				if !strings.HasPrefix(got, "400") || !strings.Contains(got, "duplicate in-flight request ID") {
					t.Errorf("the id on B after three leases of A's call: %s, want 400 and a duplicate id error", got)
				}
			case <-e.started:
				t.Error("the server ran the call a second time, on B, after three leases of A's call")
				e.finish <- struct{}{}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer from B")
			}
			a.fail.Store(true)
			e.finish <- struct{}{}
			if got := <-onA; !strings.HasPrefix(got, "200") || !strings.Contains(got, "held") {
				t.Fatalf("A's answer: %s", got)
			}
			// A's claim is left in the store, no longer renewed: it
			// expires within a lease, and B runs the id then. A ping
			// each time keeps the session (a POST refused does not
			// extend its record, which lives as long as a lease).
			deadline := time.Now().Add(10 * time.Second)
			for i := 0; ; i++ {
				ping := `{"jsonrpc":"2.0","id":"ping-` + fmt.Sprint(i) + `","method":"ping"}`
				if got := <-claimPost(ctx, urlB, id, ping); !strings.HasPrefix(got, "200") {
					t.Fatalf("a ping on B: %s", got)
				}
				ch := claimPost(ctx, urlB, id, call)
				select {
				case <-e.started:
					e.finish <- struct{}{}
					if got := <-ch; !strings.HasPrefix(got, "200") || !strings.Contains(got, "held") {
						t.Fatalf("B's answer: %s", got)
					}
					return
				case got := <-ch:
					if !strings.Contains(got, "duplicate in-flight request ID") || time.Now().After(deadline) {
						t.Fatalf("the id on B once A answered, its release failed: %s", got)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
}
