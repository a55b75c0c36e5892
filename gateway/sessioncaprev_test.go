package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// rawPostNoSession sends body as a POST with the headers given (no
// session unless they name one), as a hostile client would, and returns
// its status (0 when it failed, reported with t.Error).
func rawPostNoSession(t *testing.T, hc *http.Client, url, body string, headers map[string]string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusBadRequest {
		t.Logf("answered 400: %q", b)
	}
	return resp.StatusCode
}

// TestSessionCapNoSessionEndsNone: at a cap of 2 with both sessions idle,
// requests without a session that make none (a ping with a handshake-era
// Mcp-Protocol-Version header; an initialize with the wrong Content-Type,
// without the Accept go-sdk asks for, or with params go-sdk refuses) end
// no session: a client (at the gateway's cap, with no principal) cannot
// end the sessions of others without holding one. Its places go back:
// 2 taken, 2 idle.
func TestSessionCapNoSessionEndsNone(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 2})
	a, b := rawInit(t, url, `{}`), rawInit(t, url, `{}`)
	waitIdle(t, g, 2)
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, c := range []struct {
		name, body string
		headers    map[string]string
	}{
		{"a ping with a handshake-era version", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": v1125}},
		{"an initialize as text/plain", init, map[string]string{"Content-Type": "text/plain", "Accept": "application/json, text/event-stream"}},
		{"an initialize without Accept", init, map[string]string{"Content-Type": "application/json"}},
		{"an initialize with params go-sdk refuses", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":"x"}`, json},
		{"a batch of initialize with params go-sdk refuses", `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":7}]`, json},
	} {
		st := rawPostNoSession(t, hc, url, c.body, c.headers)
		for _, s := range []*rawSession{a, b} {
			if got := pingStatus(t, url, s.id, ""); got != http.StatusOK {
				t.Fatalf("an idle session after %s (answered %d): %d, want 200", c.name, st, got)
			}
		}
		waitIdle(t, g, 2)
		if taken, idle := checkSlots(t, g.slots); taken != 2 || idle != 2 {
			t.Fatalf("after %s: %d places taken, %d idle, want 2 and 2", c.name, taken, idle)
		}
	}
	// The claims given back kept the order: a is idle longest.
	if c := rawInitialize(t, hc, url, ""); c.status != http.StatusOK || c.id == "" {
		t.Fatalf("a 3rd session: %d %q", c.status, c.body)
	}
	if st := pingStatus(t, url, a.id, ""); st != http.StatusNotFound {
		t.Fatalf("the session idle longest after a 3rd was made: %d, want 404", st)
	}
	if st := pingStatus(t, url, b.id, ""); st != http.StatusOK {
		t.Fatalf("the other session after a 3rd was made: %d, want 200", st)
	}
}

// TestEventStoreKeepsStreamAwaitingAnswer: a client's call in go-sdk's
// handler (sdkMeta) whose POST's stream broke, while the client
// sends 70 more requests in the session (each on a stream of its own, as
// go-sdk's handler has a request of the session): the client resumes the
// call's stream (Last-Event-ID) and gets its answer. The store still
// keeps at most its bound of streams answered.
func TestEventStoreKeepsStreamAwaitingAnswer(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, nil)
	s := rawInit(t, url, `{}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prime := dropAfterPrime(t, s.post(ctx, `{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow","arguments":{"ms":1500},"_meta":`+sdkMeta+`}}`), cancel)
	for i := range 70 {
		r := s.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":`+itoa(100+i)+`,"method":"ping"}`)
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	r := s.resume(prime)
	if r.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(r.Body)
		t.Fatalf("resuming the call's stream (%s) after 70 more requests: %s %q", prime, r.Status, b)
	}
	_, data := sseIDsAndData(r)
	if len(data) != 1 || !strings.Contains(data[0], "slept 1500ms") {
		t.Fatalf("resuming the call's stream after 70 more requests: %s, %d events %.300q; want its answer", r.Status, len(data), data)
	}
	if n := heldStreams(g, s.id); n > defaultMaxStreams+1 {
		t.Fatalf("the store holds %d streams of the session, over %d and its standalone one", n, defaultMaxStreams)
	}
}

// dropAfterPrime reads resp, a call's event stream, up to its priming
// event, then drops it as a client whose connection broke would (cancel
// ends the request's context), and returns the priming event's id.
func dropAfterPrime(t testing.TB, resp *http.Response, cancel context.CancelFunc) string {
	t.Helper()
	prime := ""
	sc := bufio.NewScanner(resp.Body)
	for prime == "" && sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			prime = v
		}
	}
	cancel()
	resp.Body.Close()
	if prime == "" {
		t.Fatalf("the call's stream: %s, no priming event", resp.Status)
	}
	return prime
}

// checkSlots fails the test unless s's idle lists are sound (slotsErr);
// it returns the slots taken and listed.
func checkSlots(t *testing.T, s *sessionSlots) (taken, idle int) {
	t.Helper()
	taken, idle, err := slotsErr(s)
	if err != nil {
		t.Fatal(err)
	}
	return taken, idle
}

// slotsErr says what is wrong with s's idle lists, if anything: each
// slot listed once, idle, neither released nor claimed, linked both
// ways, and listed by its principal too.
func slotsErr(s *sessionSlots) (taken, idle int, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[*sessionSlot]bool{}
	var prev *sessionSlot
	withP := 0
	for sl := s.idle.head; sl != nil; sl = sl.next {
		if seen[sl] || !sl.isIdle || !sl.wantIdle || sl.released || sl.claimed || sl.prev != prev || sl.end == nil {
			return 0, 0, fmt.Errorf("idle list: slot listed twice %v, idle %v/%v, released %v, claimed %v, linked %v", seen[sl], sl.isIdle, sl.wantIdle, sl.released, sl.claimed, sl.prev == prev)
		}
		seen[sl] = true
		if sl.principal != "" {
			withP++
		}
		prev = sl
	}
	if s.idle.tail != prev {
		return 0, 0, errors.New("idle list: tail is not the last slot")
	}
	byP := 0
	for p, l := range s.byP {
		var pp *sessionSlot
		for sl := l.head; sl != nil; sl = sl.pnext {
			if !seen[sl] || sl.principal != p || sl.pprev != pp {
				return 0, 0, fmt.Errorf("%s's idle list: a slot not idle (%v), of %q, linked %v", p, seen[sl], sl.principal, sl.pprev == pp)
			}
			byP++
			pp = sl
		}
		if l.head == nil || l.tail != pp {
			return 0, 0, fmt.Errorf("%s's idle list: empty or its tail is not its last slot", p)
		}
	}
	if byP != withP {
		return 0, 0, fmt.Errorf("%d idle slots with a principal, %d listed by principal", withP, byP)
	}
	sum := 0
	for _, n := range s.per {
		sum += n
	}
	if s.n < 0 || sum > s.n || len(seen) > s.n {
		return 0, 0, fmt.Errorf("%d slots taken, %d by principals, %d idle", s.n, sum, len(seen))
	}
	return s.n, len(seen), nil
}

// TestSessionCapChurnFaults: 1,000 operations of alice, bob and carol
// over 4 workers against MaxSessions 6, MaxSessionsPerPrincipal 3:
// initializes (some cancelled by their client before the answer, some
// with params go-sdk refuses), requests without a session that make
// none, pings, DELETEs racing a ping of the session, forged session
// ids. The idle lists stay sound throughout; the slots taken are the
// sessions held (go-sdk's and the gateway's) at rest, never over the
// caps, and 0 once Close returns.
func TestSessionCapChurnFaults(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startForPrincipals(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 6, MaxSessionsPerPrincipal: 3})
	who := []string{"alice", "bob", "carol"}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	t.Cleanup(hc.CloseIdleConnections)
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	hdr := func(token string, extra ...string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + token}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	// Each ping its own id: two in flight in one session with one id
	// are refused (duplicate in-flight request ID).
	ping := func(w, i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 1000*w+i) }
	var mu sync.Mutex
	ids := map[string]string{} // session id -> principal
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 250 {
				p := who[(w+i)%3]
				switch i % 7 {
				case 0, 1:
					if a := rawInitializeErr(hc, url, p); a.status == http.StatusOK && a.id != "" {
						mu.Lock()
						ids[a.id] = p
						mu.Unlock()
					} else if a.status != http.StatusTooManyRequests && a.status != http.StatusServiceUnavailable {
						t.Errorf("%s's initialize: %d %q", p, a.status, a.body)
					}
				case 2: // its client gone before the answer
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond)
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(initBody))
					for k, v := range hdr(p) {
						req.Header.Set(k, v)
					}
					if resp, err := hc.Do(req); err == nil {
						if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
							mu.Lock()
							ids[id] = p
							mu.Unlock()
						}
						resp.Body.Close()
					}
					cancel()
				case 3:
					rawPostNoSession(t, hc, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, hdr(p, "Mcp-Protocol-Version", v1125))
					rawPostNoSession(t, hc, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":"x"}`, hdr(p))
				case 4, 5: // a session of p's: pinged, or ended while pinged
					var id string
					mu.Lock()
					for k, v := range ids {
						if v == p {
							id = k
							break
						}
					}
					if i%7 == 5 {
						delete(ids, id)
					}
					mu.Unlock()
					if id == "" {
						continue
					}
					if i%7 == 5 {
						done := make(chan struct{})
						go func() {
							defer close(done)
							rawPostNoSession(t, hc, url, ping(w, i), hdr(p, "Mcp-Session-Id", id, "Mcp-Protocol-Version", v1125))
						}()
						rawPostNoSession(t, hc, url, "", map[string]string{})
						req, _ := http.NewRequest(http.MethodDelete, url, nil)
						req.Header.Set("Mcp-Session-Id", id)
						req.Header.Set("Authorization", "Bearer "+p)
						if resp, err := hc.Do(req); err == nil {
							resp.Body.Close()
						}
						<-done
					} else if st := rawPostNoSession(t, hc, url, ping(w, i), hdr(p, "Mcp-Session-Id", id, "Mcp-Protocol-Version", v1125)); st != http.StatusOK && st != http.StatusNotFound {
						t.Errorf("a ping of %s's session: %d", p, st)
					}
				case 6: // forged and others' ids
					rawPostNoSession(t, hc, url, ping(w, i), hdr(p, "Mcp-Session-Id", "FORGEDFORGEDFORGEDFORGED23", "Mcp-Protocol-Version", v1125))
					mu.Lock()
					var other string
					for k, v := range ids {
						if v != p {
							other = k
							break
						}
					}
					mu.Unlock()
					if other != "" {
						if st := rawPostNoSession(t, hc, url, ping(w, i), hdr(p, "Mcp-Session-Id", other, "Mcp-Protocol-Version", v1125)); st == http.StatusOK {
							t.Errorf("%s's ping of another's session answered 200", p)
						}
					}
				}
				if _, _, err := slotsErr(g.slots); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, "the slots taken are the sessions held", func() bool {
		taken, idle := checkSlots(t, g.slots)
		return taken == liveCount(g) && taken == countSessions(g.server) && idle == taken && taken <= 6
	})
	for _, p := range who {
		if _, mine := g.slots.taken(p); mine > 3 {
			t.Fatalf("%s holds %d slots, over 3", p, mine)
		}
	}
	t.Logf("at rest: %d sessions", liveCount(g))
	mu.Lock()
	for id, p := range ids {
		req, _ := http.NewRequest(http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Authorization", "Bearer "+p)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	mu.Unlock()
	// Left: the sessions of initializes whose clients went before the
	// answer (their ids unknown here), idle.
	waitFor(t, "the slots taken are the sessions left once every known one ended", func() bool {
		taken, idle := checkSlots(t, g.slots)
		return taken == liveCount(g) && taken == countSessions(g.server) && idle == taken
	})
	t.Logf("sessions left whose clients went before the answer: %d", liveCount(g))
	if a := rawInitialize(t, hc, url, "alice"); a.status != http.StatusOK {
		t.Fatalf("an initialize after the churn: %d %q", a.status, a.body)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every slot given back on Close", func() bool { taken, _ := checkSlots(t, g.slots); return taken == 0 })
}

// rawInitializeErr is rawInitialize for a goroutine other than the
// test's: a request that fails is answered status 0.
func rawInitializeErr(hc *http.Client, url, token string) capAnswer {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return capAnswer{body: err.Error()}
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return capAnswer{status: resp.StatusCode, id: resp.Header.Get("Mcp-Session-Id"), body: string(b)}
}

// TestSessionEndedUnderRequests: a session ended by the gateway (as a
// session claimed at a cap is, when a request of it came meanwhile)
// while a call of it runs on the session fast path and another in
// go-sdk's handler: each client's POST ends (its answer or an error),
// none hangs, and the session's next request is answered 404.
func TestSessionEndedUnderRequests(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 4})
	for _, meta := range []string{"", sdkMeta} {
		s := rawInit(t, url, `{}`)
		call := slowCall(s, 800, meta)
		waitFor(t, "the call in flight", func() bool {
			ls := g.live.get(s.id, "")
			return ls != nil && (g.live.calling(ls) || g.inflightCount() > 0)
		})
		ls := g.live.get(s.id, "")
		if ls == nil {
			t.Fatal("the session is not live")
		}
		ls.close()
		select {
		case st := <-call:
			t.Logf("meta %q: the call's POST ended %d", meta, st)
		case <-time.After(10 * time.Second):
			t.Fatalf("meta %q: the call's POST did not end 10 s after its session ended", meta)
		}
		if st := pingStatus(t, url, s.id, ""); st != http.StatusNotFound {
			t.Fatalf("meta %q: a ping of the ended session: %d, want 404", meta, st)
		}
		waitFor(t, "no slot of the ended session", func() bool { taken, _ := checkSlots(t, g.slots); return taken == 0 })
	}
}

// TestSessionSlotsClaim: a session claimed at a cap is ended only once
// the new one is kept (commit); a request of it meanwhile has the one
// idle longest then ended instead, or, with none idle, itself; a claim
// whose new session was not made (release) lists the claimed session
// idle again, first. The slots taken never drift.
func TestSessionSlotsClaim(t *testing.T) {
	s := newSessionSlots(&Options{MaxSessions: 2})
	ended := map[string]int{}
	idle := func(name string) *sessionSlot {
		sl, capErr := s.take("")
		if capErr != nil {
			t.Fatalf("%s: %v", name, capErr)
		}
		sl.markIdle(func() { ended[name]++ })
		return sl
	}
	a := idle("a")
	b := idle("b")
	c, _ := s.take("") // claims a
	c.release()        // not made: a is idle again, idle longest
	if taken, n := checkSlots(t, s); taken != 2 || n != 2 || s.idle.head != a {
		t.Fatalf("after a claim given back: %d taken, %d idle, a first %v", taken, n, s.idle.head == a)
	}
	d, _ := s.take("") // claims a
	a.markBusy()       // a request of a came
	ev := d.commit()   // b is ended instead
	if ev == nil || ev.end == nil {
		t.Fatal("nothing ended at commit")
	}
	ev.end()
	if ended["b"] != 1 || ended["a"] != 0 {
		t.Fatalf("ended %v, want b", ended)
	}
	d.markIdle(func() { ended["d"]++ })
	e, _ := s.take("") // claims d (a is busy)
	d.markBusy()
	if ev := e.commit(); ev == nil {
		t.Fatal("nothing ended at commit with none idle")
	} else {
		ev.end()
	}
	if ended["d"] != 1 {
		t.Fatalf("ended %v, want d too (none idle: the cap holds)", ended)
	}
	if taken, _ := checkSlots(t, s); taken != 2 {
		t.Fatalf("%d slots taken, want 2 (a, e)", taken)
	}
	a.release()
	e.release()
	b.release() // ended before: released once only
	if taken, _ := checkSlots(t, s); taken != 0 {
		t.Fatalf("%d slots taken after all ended, want 0", taken)
	}
}
