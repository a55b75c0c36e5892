package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// sharedPair starts two replicas sharing a MemorySessionStore over a
// handshake-era server that records its calls and cancellations, with
// the session fast path or (slow) without it; alice's session is made on
// the first one.
func sharedPair(t *testing.T, slow bool, opts Options) (rs []*replica, st *testserver.State, id string, hc *http.Client) {
	t.Helper()
	srv, st := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	store := &MemorySessionStore{}
	opts.slowPathOnly = slow
	rs = startReplicasWith(t, []SessionStore{store, store}, up.URL, opts)
	hc = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	s := rawInitialize(t, hc, rs[0].ts.URL+"/mcp", "alice")
	if s.status != http.StatusOK || s.id == "" {
		t.Fatalf("initialize on A: %d %q", s.status, s.body)
	}
	onA := &rawSession{t: t, url: rs[0].ts.URL + "/mcp", id: s.id}
	onA.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return rs, st, s.id, hc
}

// onPath fails the test unless the call in flight in session id's copy
// on g is on the path the pair was started with: the session fast path
// unless slow.
func onPath(t *testing.T, g *Gateway, id string, slow bool) {
	t.Helper()
	ls := g.live.get(id, "alice")
	if fast := ls != nil && g.live.calling(ls); fast == slow {
		t.Fatalf("the call in flight on B is on the session fast path: %v, want %v", fast, !slow)
	}
}

// TestSharedSessionFastCopyIdle: with Options.SessionTimeout, a copy of
// a shared session is not idle while a call of it is in flight on either
// path: replica B does not close its copy under a call that outlasts the
// timeout (go-sdk's handler pauses its idle timer while a POST of the
// session is served; the session fast path serves a POST without it).
func TestSharedSessionFastCopyIdle(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "go-sdk"}[slow], func(t *testing.T) {
			rs, st, id, _ := sharedPair(t, slow, Options{SessionTimeout: timeout})
			onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}
			// The copy is made by a ping, then called.
			resp := onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ss := rs[1].g.shared.held(id)
			if resp.StatusCode != http.StatusOK || ss == nil {
				t.Fatalf("ping on B: %s, copy held: %v", resp.Status, ss != nil)
			}
			closed := make(chan time.Time, 1)
			go func() { _ = ss.Wait(); closed <- time.Now() }()
			answered := make(chan string, 1)
			go func() {
				resp := onB.postAs(testCtx(t, 20*time.Second), "alice", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":`+itoa(int(10*timeout/time.Millisecond))+`}}}`)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answered <- string(b)
			}()
			if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
				t.Fatalf("the call never reached the server: %v", err)
			}
			onPath(t, rs[1].g, id, slow)
			b := within(t, answered, 20*time.Second, "the call's answer")
			at := time.Now()
			if !strings.Contains(b, "slept") {
				t.Errorf("the call's answer: %q", b)
			}
			select {
			case c := <-closed:
				if c.Before(at) {
					t.Errorf("B closed its copy while the call was in flight (%v before its answer)", at.Sub(c))
				}
			default:
			}
		})
	}
}
