package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openStream opens the standalone stream (GET) of session id with token
// as its bearer token (none when ""), and returns once the gateway
// answered it; stop closes it.
func openStream(t testing.TB, url, id, token string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		t.Fatalf("the standalone stream of session %s: %s", id, resp.Status)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); resp.Body.Close() }) }
	t.Cleanup(stop)
	return stop
}

// pingStatus sends a ping of session id with token (none when "") and
// returns the status it is answered with.
func pingStatus(t *testing.T, url, id, token string) int {
	t.Helper()
	s := &rawSession{t: t, url: url, id: id}
	var resp *http.Response
	if token == "" {
		resp = s.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	} else {
		resp = s.postAs(testCtx(t, 10*time.Second), token, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitIdle waits until n of g's sessions are listed as idle.
func waitIdle(t *testing.T, g *Gateway, n int) {
	t.Helper()
	waitFor(t, "sessions listed idle", func() bool { return g.slots.idleCount() == n })
}

// TestSessionCapEvictsIdle: a gateway capped at 3 sessions, all three
// left idle by their clients (raw HTTP and go-sdk's, no standalone
// stream): a 4th client gets in, the session idle longest is ended (its
// next request is answered 404, and a go-sdk client's call fails), the
// others go on, and the end is logged once with its cap and how long
// the session was idle.
func TestSessionCapEvictsIdle(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	logs := &lockedBuffer{}
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 3,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	a := rawInit(t, url, `{}`)
	c := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil)
	b, err := c.Connect(testCtx(t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if res, err := b.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "b"}}); err != nil || texts(res) != "b" {
		t.Fatalf("b's call: %v %v", err, texts(res))
	}
	cs := rawInit(t, url, `{}`)
	waitIdle(t, g, 3)

	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	d := rawInitialize(t, hc, url, "")
	if d.status != http.StatusOK || d.id == "" {
		t.Fatalf("a 4th session, three idle: %d %q, want a session", d.status, d.body)
	}
	if st := pingStatus(t, url, a.id, ""); st != http.StatusNotFound {
		t.Fatalf("the session idle longest after the 4th was made: %d, want 404", st)
	}
	if st := pingStatus(t, url, cs.id, ""); st != http.StatusOK {
		t.Fatalf("another idle session after the 4th was made: %d, want 200", st)
	}
	if res, err := b.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "b2"}}); err != nil || texts(res) != "b2" {
		t.Fatalf("b's call after the 4th was made: %v %v", err, texts(res))
	}
	if n := countSessions(g.server); n != 3 || liveCount(g) != 3 {
		t.Fatalf("go-sdk holds %d sessions and the gateway %d, want 3", n, liveCount(g))
	}
	if n := strings.Count(logs.String(), "idle longest is ended"); n != 1 || !strings.Contains(logs.String(), "cap=MaxSessions ") || !strings.Contains(logs.String(), "idle=") {
		t.Fatalf("%d ends logged, want 1 naming the cap and the idle time:\n%s", n, logs.String())
	}

	// Idle longest now: d (made before c's ping and b's call), then c, b.
	waitIdle(t, g, 3)
	if e := rawInitialize(t, hc, url, ""); e.status != http.StatusOK || e.id == "" {
		t.Fatalf("a 5th session: %d %q", e.status, e.body)
	}
	if st := pingStatus(t, url, d.id, ""); st != http.StatusNotFound {
		t.Fatalf("d after the 5th was made: %d, want 404", st)
	}
	waitIdle(t, g, 3)
	if f := rawInitialize(t, hc, url, ""); f.status != http.StatusOK || f.id == "" {
		t.Fatalf("a 6th session: %d %q", f.status, f.body)
	}
	if st := pingStatus(t, url, cs.id, ""); st != http.StatusNotFound {
		t.Fatalf("c after the 6th was made: %d, want 404", st)
	}
	waitIdle(t, g, 3)
	if h := rawInitialize(t, hc, url, ""); h.status != http.StatusOK || h.id == "" {
		t.Fatalf("a 7th session: %d %q", h.status, h.body)
	}
	if _, err := b.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "gone"}}); err == nil {
		t.Fatal("a go-sdk client's call of a session ended at the cap succeeded")
	} else {
		t.Logf("a go-sdk client's call of its ended session: %v", err)
	}
}

// TestSessionCapBusyNeverEnded: a session with its standalone stream
// open (a go-sdk client's, a raw GET) or a call in flight is never ended
// at the cap: a 4th initialize is refused (503) while all three are
// busy, and let in, ending the one, once a call has been answered.
func TestSessionCapBusyNeverEnded(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 3})
	streaming := connect(t, url, v1125, nil) // go-sdk's client opens its standalone stream
	c := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, nil)
	caller, err := c.Connect(testCtx(t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caller.Close() })
	callCtx, cancelCall := context.WithCancel(testCtx(t, 60*time.Second))
	defer cancelCall()
	called := make(chan error, 1)
	go func() {
		_, err := caller.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 30000}})
		called <- err
	}()
	raw := rawInit(t, url, `{}`)
	openStream(t, url, raw.id, "")
	waitIdle(t, g, 0)

	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	for i := range 3 {
		if a := rawInitialize(t, hc, url, ""); a.status != http.StatusServiceUnavailable || a.id != "" {
			t.Fatalf("initialize %d with three busy sessions: %d %q, want 503", i, a.status, a.body)
		}
	}
	if res, err := streaming.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "s"}}); err != nil || texts(res) != "s" {
		t.Fatalf("the streaming client's call: %v %v", err, texts(res))
	}
	if st := pingStatus(t, url, raw.id, ""); st != http.StatusOK {
		t.Fatalf("the raw session with its stream open: %d", st)
	}
	select {
	case err := <-called:
		t.Fatalf("the slow call ended: %v", err)
	default:
	}
	cancelCall()
	if err := <-called; err == nil {
		t.Fatal("the cancelled slow call succeeded")
	}
	waitIdle(t, g, 1)
	if a := rawInitialize(t, hc, url, ""); a.status != http.StatusOK || a.id == "" {
		t.Fatalf("initialize once the call ended: %d %q, want a session", a.status, a.body)
	}
	if _, err := caller.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Fatal("the caller's session, ended at the cap, still answers")
	}
	if res, err := streaming.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "s2"}}); err != nil || texts(res) != "s2" {
		t.Fatalf("the streaming client's call: %v %v", err, texts(res))
	}
}

// TestSessionCapPrincipalEvictsOwn: alice at her cap (2) ends her own
// session idle longest, never bob's idle longer; at the gateway's cap
// (5) the session idle longest of anyone's is ended; logged with the
// cap and the principal.
func TestSessionCapPrincipalEvictsOwn(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	logs := &lockedBuffer{}
	g, url := startForPrincipals(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 5, MaxSessionsPerPrincipal: 2,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	init := func(who string) string {
		t.Helper()
		a := rawInitialize(t, hc, url, who)
		if a.status != http.StatusOK || a.id == "" {
			t.Fatalf("%s's session: %d %q", who, a.status, a.body)
		}
		return a.id
	}
	bob1, bob2 := init("bob"), init("bob")
	alice1, alice2 := init("alice"), init("alice")
	waitIdle(t, g, 4)
	alice3 := init("alice")
	if st := pingStatus(t, url, alice1, "alice"); st != http.StatusNotFound {
		t.Fatalf("alice's session idle longest after her 3rd: %d, want 404", st)
	}
	for _, id := range []string{bob1, bob2} {
		if st := pingStatus(t, url, id, "bob"); st != http.StatusOK {
			t.Fatalf("bob's session after alice's 3rd: %d, want 200", st)
		}
	}
	if !strings.Contains(logs.String(), "cap=MaxSessionsPerPrincipal principal=alice") {
		t.Fatalf("alice's end not logged with her cap:\n%s", logs.String())
	}
	if all, mine := g.slots.taken("alice"); all != 4 || mine != 2 {
		t.Fatalf("%d places taken, %d by alice; want 4 and 2", all, mine)
	}
	// Idle longest now: alice2, alice3, bob1, bob2 (pinged in order).
	waitIdle(t, g, 4)
	init("carol") // 5 places
	waitIdle(t, g, 5)
	init("dave") // the gateway's cap: alice2, idle longest of anyone's
	if st := pingStatus(t, url, alice2, "alice"); st != http.StatusNotFound {
		t.Fatalf("the session idle longest at the gateway's cap: %d, want 404", st)
	}
	if st := pingStatus(t, url, alice3, "alice"); st != http.StatusOK {
		t.Fatalf("alice's other session: %d, want 200", st)
	}
	if !strings.Contains(logs.String(), "cap=MaxSessions principal=alice") {
		t.Fatalf("the end at the gateway's cap not logged:\n%s", logs.String())
	}
}

// TestSessionCapEvictChurn: 200 clients making a session each and
// leaving it idle, against a cap of 3: each is let in, ending the one
// idle longest; the gateway ends with 3 sessions, 3 places, and its
// goroutines and the sessions' idle timers as they were at 3.
func TestSessionCapEvictChurn(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 3, SessionTimeout: time.Hour})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
	t.Cleanup(hc.CloseIdleConnections)
	const n = 200
	base := 0
	for i := range n {
		if i == 3 {
			waitIdle(t, g, 3)
			base = runtime.NumGoroutine()
		}
		if a := rawInitialize(t, hc, url, ""); a.status != http.StatusOK || a.id == "" {
			t.Fatalf("session %d: %d %q", i, a.status, a.body)
		}
		waitIdle(t, g, min(i+1, 3))
	}
	waitFor(t, "go-sdk's sessions and the gateway's records at the cap", func() bool {
		return countSessions(g.server) == 3 && liveCount(g) == 3
	})
	if all, _ := g.slots.taken(""); all != 3 {
		t.Fatalf("%d places taken, want 3", all)
	}
	waitFor(t, "the goroutines as they were at 3 sessions", func() bool { return runtime.NumGoroutine() <= base+2 })
	t.Logf("goroutines at 3 sessions %d, after %d more: %d", base, n-3, runtime.NumGoroutine())
}

// TestSessionCapEvictsReplicaCopy: with shared sessions a replica at its
// cap ends the copy idle longest of its own, which only ends the copy:
// the session's record stays, and its next request on the replica makes
// it again (ending the copy idle longest then); a replica whose copies
// all have a stream open refuses.
func TestSessionCapEvictsReplicaCopy(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicasWith(t, []SessionStore{store, store}, old.URL, Options{MaxSessions: 2, MaxSessionsPerPrincipal: -1})
	a := rs[0].ts.URL + "/mcp"
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	var onA []string
	for i := range 3 {
		s := rawInitialize(t, hc, a, "carol")
		if s.status != http.StatusOK || s.id == "" {
			t.Fatalf("session %d on A: %d %q", i, s.status, s.body)
		}
		onA = append(onA, s.id)
		waitIdle(t, rs[0].g, min(i+1, 2))
	}
	if rs[0].g.shared.held(onA[0]) != nil {
		t.Fatal("A still holds the copy idle longest after a 3rd session")
	}
	if st := pingStatus(t, a, onA[0], "carol"); st != http.StatusOK {
		t.Fatalf("the session whose copy was ended, on A: %d, want 200 (made again)", st)
	}
	if rs[0].g.shared.held(onA[1]) != nil || rs[0].g.shared.held(onA[0]) == nil {
		t.Fatal("A did not make the first copy again in place of the one idle longest")
	}
	waitIdle(t, rs[0].g, 2)
	openStream(t, a, onA[0], "carol")
	openStream(t, a, onA[2], "carol")
	waitIdle(t, rs[0].g, 0)
	if s := rawInitialize(t, hc, a, "carol"); s.status != http.StatusServiceUnavailable {
		t.Fatalf("a session on A, both its copies streaming: %d %q, want 503", s.status, s.body)
	}
	if all, _ := rs[0].g.slots.taken(""); all != 2 {
		t.Errorf("A holds %d places, want 2", all)
	}
}
