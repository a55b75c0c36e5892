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

// claimCase is alice's call under one id, on replicas A and B of e over
// one session store.
type claimCase struct {
	t          *testing.T
	e          *limitEnv
	ctx        context.Context
	urlA, urlB string
	id, call   string
}

// started waits for the server to start a run of the call.
func (c *claimCase) started(what string) {
	c.t.Helper()
	select {
	case <-c.e.started:
	case <-time.After(10 * time.Second):
		c.t.Fatalf("no %s", what)
	}
}

// refusedOnB sends the call to B and fails the test unless B refuses it
// as a duplicate in-flight id, the server not running it.
func (c *claimCase) refusedOnB(what string) {
	c.t.Helper()
	select {
	case got := <-claimPost(c.ctx, c.urlB, c.id, c.call):
		if !strings.HasPrefix(got, "400") || !strings.Contains(got, "duplicate in-flight request ID") {
			c.t.Errorf("%s: %s, want 400 and a duplicate id error", what, got)
		}
	case <-c.e.started:
		c.t.Errorf("%s: the server ran the call a second time, on B", what)
		c.e.finish <- struct{}{}
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: no answer from B", what)
	}
}

// answered lets the run of the call go and fails the test unless ch, its
// POST's, has its answer.
func (c *claimCase) answered(ch <-chan string, who string) {
	c.t.Helper()
	c.e.finish <- struct{}{}
	if got := <-ch; !strings.HasPrefix(got, "200") || !strings.Contains(got, "held") {
		c.t.Fatalf("%s's answer: %s", who, got)
	}
}

// runsOnB sends the call to B until B runs it (a refusal meanwhile is the
// claim still there), for 10 s at most, calling each first, and fails the
// test unless its answer comes.
func (c *claimCase) runsOnB(what string, each func(i int)) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		each(i)
		ch := claimPost(c.ctx, c.urlB, c.id, c.call)
		select {
		case <-c.e.started:
			c.answered(ch, "B")
			return
		case got := <-ch:
			if !strings.Contains(got, "duplicate in-flight request ID") || time.Now().After(deadline) {
				c.t.Fatalf("%s: %s", what, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
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
			c := &claimCase{t: t, e: e, ctx: limitCtx(t, 60*time.Second), call: `{"jsonrpc":"2.0","id":"retry-7","method":"tools/call","params":{"name":"hold","arguments":{}}}`}
			c.urlA, c.urlB = e.sessionReplica(store), e.sessionReplica(store)
			c.id = e.client(c.urlA, "alice").ID()
			onA := claimPost(c.ctx, c.urlA, c.id, c.call)
			c.started("run of the call on A")
			c.refusedOnB("the id again on B")
			c.answered(onA, "A")
			// A releases the claim once its answer is written: B runs the
			// id then.
			c.runsOnB("the id on B once A answered", func(int) {})
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
			c := &claimCase{t: t, e: e, ctx: limitCtx(t, 60*time.Second), call: `{"jsonrpc":"2.0","id":"retry-8","method":"tools/call","params":{"name":"hold","arguments":{}}}`}
			c.urlA, c.urlB = e.sessionReplicaTTL(a, ttl), e.sessionReplicaTTL(store, ttl)
			c.id = e.client(c.urlA, "alice").ID()
			onA := claimPost(c.ctx, c.urlA, c.id, c.call)
			c.started("run of the call on A")
			time.Sleep(3 * ttl * 5 / 4) // three leases pass
			c.refusedOnB("the id on B after three leases of A's call")
			a.fail.Store(true)
			c.answered(onA, "A")
			// A's claim is left in the store, no longer renewed: it
			// expires within a lease, and B runs the id then. A ping
			// each time keeps the session (a POST refused does not
			// extend its record, which lives as long as a lease).
			c.runsOnB("the id on B once A answered, its release failed", func(i int) {
				ping := `{"jsonrpc":"2.0","id":"ping-` + fmt.Sprint(i) + `","method":"ping"}`
				if got := <-claimPost(c.ctx, c.urlB, c.id, ping); !strings.HasPrefix(got, "200") {
					t.Fatalf("a ping on B: %s", got)
				}
			})
		})
	}
}
