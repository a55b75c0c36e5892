package gateway

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// endedPair starts two replicas sharing a MemorySessionStore over a
// handshake-era server whose slow tool records its calls and
// cancellations, with the session fast path or (slow) without it; before,
// when not nil, is called with replica B's gateway before it starts.
// Alice's session is made on A.
func endedPair(t *testing.T, slow bool, opts Options, before func(*Gateway)) (rs []*replica, st *testserver.State, store *MemorySessionStore, id string) {
	t.Helper()
	srv, st := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	store = &MemorySessionStore{}
	opts.slowPathOnly = slow
	opts.extraIdle = 100 * time.Millisecond
	n := 0
	rs = startReplicasHook(t, []SessionStore{store, store}, up.URL, opts, func(g *Gateway) {
		if n++; n == 2 && before != nil {
			before(g)
		}
	})
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	s := rawInitialize(t, hc, rs[0].ts.URL+"/mcp", "alice")
	if s.status != http.StatusOK || s.id == "" {
		t.Fatalf("initialize on A: %d %q", s.status, s.body)
	}
	onA := &rawSession{t: t, url: rs[0].ts.URL + "/mcp", id: s.id}
	drain(onA.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return rs, st, store, s.id
}

// TestSharedSessionEndedElsewhere: alice's call runs on replica B, in
// B's copy of her session (on B's session fast path, then on go-sdk's
// path), when her session ends elsewhere: she DELETEs it on replica A,
// its record leaves the store with no notice (as when it expires, or the
// store evicts it), or she DELETEs it on A while B does not poll and her
// next request comes to B. The call on B ends: its POST is
// answered or ended, not as done, and the server is told the call is
// cancelled; B's copy ends; her next request on B is refused 404, not
// held up behind the call (60 s); B is left with no more goroutines than
// before it made the copy.
func TestSharedSessionEndedElsewhere(t *testing.T) {
	for _, slow := range []bool{false, true} {
		for _, how := range []string{"delete", "dropped", "request"} {
			t.Run(map[bool]string{false: "fast", true: "go-sdk"}[slow]+"/"+how, func(t *testing.T) {
				endedElsewhere(t, slow, how)
			})
		}
	}
}

func endedElsewhere(t *testing.T, slow bool, how string) {
	var before func(*Gateway)
	if how == "request" {
		before = func(g *Gateway) { g.shared.pollPlain = time.Hour }
	}
	rs, st, store, id := endedPair(t, slow, Options{}, before)
	gb := rs[1].g
	onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}
	http.DefaultClient.CloseIdleConnections()
	base := settleGoroutines(runtime.NumGoroutine())
	ended := startSlowCall(t, http.DefaultClient, st, onB.url, id, 7)
	onPath(t, gb, id, slow)
	if how == "dropped" {
		if err := store.DeleteSession(testCtx(t, 5*time.Second), id); err != nil {
			t.Fatal(err)
		}
	} else {
		req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodDelete, rs[0].ts.URL+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", v1125)
		req.Header.Set("Authorization", "Bearer alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if drain(resp) != http.StatusNoContent {
			t.Fatalf("alice's DELETE on A: %s", resp.Status)
		}
	}
	if how == "request" {
		pinged := make(chan int, 1)
		go func() {
			pinged <- drain(onB.postAs(testCtx(t, 90*time.Second), "alice", `{"jsonrpc":"2.0","id":8,"method":"ping"}`))
		}()
		if code := within(t, pinged, 20*time.Second, "alice's ping on B once her session was deleted on A"); code != http.StatusNotFound {
			t.Errorf("alice's ping on B once her session was deleted on A: %d, want 404", code)
		}
	}
	if b := within(t, ended, 30*time.Second, "the call's POST on B"); strings.Contains(b, "slept") {
		t.Errorf("the call on B was answered as done: %q", b)
	} else {
		t.Logf("the call's POST on B: %.200q", b)
	}
	if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Cancellations() == 1 }); err != nil {
		t.Errorf("the server saw %d cancellations: %v", st.Cancellations(), err)
	}
	if how != "request" {
		if code := drain(onB.postAs(testCtx(t, 20*time.Second), "alice", `{"jsonrpc":"2.0","id":8,"method":"ping"}`)); code != http.StatusNotFound {
			t.Errorf("alice's ping on B once her session ended: %d, want 404", code)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); gb.shared.held(id) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("B still holds its copy of the ended session")
		}
	}
	http.DefaultClient.CloseIdleConnections()
	if n := settleGoroutines(base); n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines once the session ended, %d before B made its copy:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// startSlowCall posts alice's call of slow for 60 s, under request id
// rid, in session id at url through hc, and waits until the server has
// it; the channel gets the POST's status and body, or its error, once the
// POST ends.
func startSlowCall(t *testing.T, hc *http.Client, st *testserver.State, url, id string, rid int) <-chan string {
	t.Helper()
	ended := make(chan string, 1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}`, rid)
	go func() {
		req, _ := http.NewRequestWithContext(testCtx(t, 90*time.Second), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", v1125)
		req.Header.Set("Authorization", "Bearer alice")
		resp, err := hc.Do(req)
		if err != nil {
			ended <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ended <- resp.Status + " " + string(b)
	}()
	if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
		t.Fatalf("the call never reached the server: %v", err)
	}
	return ended
}
