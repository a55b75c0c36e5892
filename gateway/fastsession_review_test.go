package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// sendVersioned sends a request of session s with method, body and the
// Mcp-Protocol-Version header version, and returns the answer's status
// and body, reading at most 2 s of it (a call's stream stays open).
func sendVersioned(t *testing.T, s *rawSession, method, version, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, s.url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": s.id, "Mcp-Protocol-Version": version} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body) // ends with the answer or at 2 s
	return resp.StatusCode, string(data)
}

// TestSessionIdleAfterRefusedDelete: a DELETE that go-sdk refuses (an
// unsupported Mcp-Protocol-Version header, or a 2026-07-28 one, which
// goes to the stateless handler) neither ends the session nor cancels
// its call in flight on the session fast path, and the
// session still ends once idle for Options.SessionTimeout: the gateway's
// idle timer is its only one.
func TestSessionIdleAfterRefusedDelete(t *testing.T) {
	hold := startHoldServer(t)
	const idle = 300 * time.Millisecond
	g, url := startGateway(t, []Server{{Name: "h", Target: hold.url}}, &Options{SessionTimeout: idle})
	for _, version := range []string{"1999-01-01", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			s := rawInit(t, url, `{}`)
			t.Cleanup(func() { _ = s.end() })
			runs, cancelled := hold.runs.Load(), hold.cancelled.Load()
			drop := postAway(t, s, holdCall)
			waitFor(t, "the call at the server", func() bool { return hold.runs.Load() == runs+1 })
			if status, body := sendVersioned(t, s, http.MethodDelete, version, ""); status == http.StatusNoContent || status == http.StatusOK {
				t.Fatalf("the DELETE with version %s was answered %d %.200s, want a refusal", version, status, body)
			}
			// A cancellation reaches the server within milliseconds.
			for range 50 {
				if n := hold.cancelled.Load() - cancelled; n != 0 {
					t.Fatalf("the refused DELETE cancelled the session's call (%d cancelled at the server)", n)
				}
				time.Sleep(10 * time.Millisecond)
			}
			cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
			if status, body := sendVersioned(t, s, http.MethodPost, v1125, cancel); status != http.StatusAccepted {
				t.Fatalf("the cancellation was answered %d %.200s", status, body)
			}
			waitFor(t, "the cancelled call's end", func() bool { return hold.cancelled.Load() == cancelled+1 })
			drop()
			ping := `{"jsonrpc":"2.0","id":3,"method":"ping"}`
			if status, body := sendVersioned(t, s, http.MethodPost, v1125, ping); status != http.StatusOK {
				t.Fatalf("the session ended with the refused DELETE: %d %.200s", status, body)
			}
			deadline := time.Now().Add(20 * idle)
			for {
				time.Sleep(2 * idle)
				status, _ := sendVersioned(t, s, http.MethodPost, v1125, ping)
				if status == http.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the session idle for %v (timeout %v) is still served (%d)", 20*idle, idle, status)
				}
			}
			waitFor(t, "the session's record's end", func() bool {
				g.live.mu.Lock()
				defer g.live.mu.Unlock()
				return g.live.by[s.id] == nil
			})
		})
	}
}

// TestSessionFastBatchPastIDCap: a batch (protocol version 2025-03-26,
// which go-sdk's handler takes) of 64 requests and then a tools/call
// naming the id of a call in flight on the session fast path is refused
// as a duplicate: the call does not run twice.
func TestSessionFastBatchPastIDCap(t *testing.T) {
	hold := startHoldServer(t)
	g, url := startGateway(t, []Server{{Name: "h", Target: hold.url}}, nil)
	s := rawInit(t, url, `{}`)
	drop := postAway(t, s, holdCall)
	waitFor(t, "the first call at the server", func() bool { return hold.runs.Load() == 1 })
	if !g.live.calling(g.live.get(s.id, "")) {
		t.Fatal("the call is not on the session fast path")
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := range 64 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"},`, 100+i)
	}
	b.WriteString(holdCall + "]")
	status, body := sendVersioned(t, s, http.MethodPost, "2025-03-26", b.String())
	if status != http.StatusBadRequest || !strings.Contains(body, "duplicate in-flight request ID 7") {
		t.Errorf("the batch naming the call's id 65th was answered %d %.300s, want 400 duplicate in-flight request ID 7", status, body)
	}
	if n := hold.runs.Load(); n != 1 {
		t.Errorf("the call ran %d times, want 1", n)
	}
	drop()
	endRawSession(t, s)
	waitFor(t, "the calls' end", func() bool { return g.inflightCount() == 0 })
}

// flushBlocker is a ResponseWriter whose Flush waits until release is
// closed (a client whose connection takes nothing more), recording
// whether a Flush was under way when the handler returned.
type flushBlocker struct {
	*httptest.ResponseRecorder
	flushing atomic.Bool
	started  chan struct{}
	release  chan struct{}
	once     atomic.Bool
}

func (f *flushBlocker) Flush() {
	f.flushing.Store(true)
	if f.once.CompareAndSwap(false, true) {
		close(f.started)
	}
	<-f.release
	f.ResponseRecorder.Flush()
	f.flushing.Store(false)
}

// TestSessionFastEarlyHeaderAfterClose: a call on the session fast path
// whose early header is being flushed when the gateway closes does not
// return from its handler while the flush uses its ResponseWriter
// (net/http takes the writer back once the handler returns).
func TestSessionFastEarlyHeaderAfterClose(t *testing.T) {
	_, g, s, ls := holdSession(t)
	r := httptest.NewRequestWithContext(testCtx(t, 20*time.Second), http.MethodPost, "/mcp", strings.NewReader(holdCall))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": s.id, "Mcp-Protocol-Version": v1125} {
		r.Header.Set(k, v)
	}
	w := &flushBlocker{ResponseRecorder: httptest.NewRecorder(), started: make(chan struct{}), release: make(chan struct{})}
	var flushingAtReturn atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.serveLive(w, r, ls, g.stateful.ServeHTTP)
		flushingAtReturn.Store(w.flushing.Load())
	}()
	select {
	case <-w.started:
	case <-time.After(10 * time.Second):
		close(w.release)
		t.Fatal("no early header after 10 s")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = g.Close()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second): // the handler waits for the flush
	}
	close(w.release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not return after the flush")
	}
	if flushingAtReturn.Load() {
		t.Error("the handler returned while its early header was being flushed")
	}
	<-closed
}

// TestSessionFastCapsCrossing: sessions with different capabilities
// calling alternately through one 2026-07-28 server, on the session fast
// path and on go-sdk's handler, each have their own capabilities sent
// with each of their calls (the gateway's capabilities memo never gives
// one session's to another's call).
func TestSessionFastCapsCrossing(t *testing.T) {
	up := startCapsServer(t)
	g, url := startGateway(t, []Server{{Name: "up", Target: up.URL}}, nil)
	users := []struct {
		name, caps, want string
	}{
		{"alice", `{"experimental":{"alice":{}}}`, `\"alice\"`},
		{"bob", `{"experimental":{"bob":{}}}`, `\"bob\"`},
		{"carol", `{}`, ``},
	}
	sessions := make([]*rawSession, len(users))
	for i, u := range users {
		sessions[i] = rawInit(t, url, u.caps)
		t.Cleanup(func() { _ = sessions[i].end() })
	}
	before := g.sessionFast.Load()
	fast := 0
	for round := range 4 {
		for i, u := range users {
			meta := ""
			if round%2 == 1 && i == 1 {
				meta = `,"_meta":{"io.modelcontextprotocol/x":1}` // go-sdk's handler
			} else {
				fast++
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"caps","arguments":{}%s}}`, 10+round, meta)
			status, got := postStatus(t, sessions[i], body)
			if status != http.StatusOK || !strings.Contains(got, `"result"`) {
				t.Fatalf("%s, round %d: %d %.300s", u.name, round, status, got)
			}
			for _, other := range users {
				if other.want != "" && other.want != u.want && strings.Contains(got, other.want) {
					t.Errorf("%s, round %d: the server was sent %s's capabilities: %.300s", u.name, round, other.name, got)
				}
			}
			if u.want != "" && !strings.Contains(got, u.want) {
				t.Errorf("%s, round %d: the server was not sent %s's capabilities: %.300s", u.name, round, u.name, got)
			}
		}
	}
	if n := g.sessionFast.Load() - before; n != int64(fast) {
		t.Errorf("%d of %d calls on the session fast path", n, fast)
	}
}

// TestSessionIdleOtherPrincipalPost: a session made without a principal
// is served by go-sdk to anyone; a POST of it made with a principal (a
// gateway whose bearer token is optional) keeps it from going idle while
// the POST is served, as the session's own POSTs do: the session is
// still served right after a call longer than the timeout.
func TestSessionIdleOtherPrincipalPost(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	const idle = 500 * time.Millisecond
	g, _ := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{SessionTimeout: idle})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	withToken := auth.RequireBearerToken(verify, nil)(g)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			withToken.ServeHTTP(w, r)
			return
		}
		g.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s := rawInit(t, ts.URL+"/mcp", `{}`)
	t.Cleanup(func() { _ = s.end() })
	req, _ := http.NewRequestWithContext(testCtx(t, 20*time.Second), http.MethodPost, s.url,
		strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"ms":%d}}}`, 4*idle.Milliseconds())))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": s.id, "Mcp-Protocol-Version": v1125, "Authorization": "Bearer bob"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"id":7,"result"`) {
		t.Fatalf("bob's call: %d %.300s", resp.StatusCode, body)
	}
	if status, body := sendVersioned(t, s, http.MethodPost, v1125, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); status != http.StatusOK {
		t.Errorf("the session ended while a POST of it was served: %d %.200s", status, body)
	}
}

// TestSessionIdleChurn: 1000 sessions left by their clients (no DELETE),
// half of them after a call on the session fast path, all end once idle
// for Options.SessionTimeout, leaving no record and no goroutine of
// theirs. A session that idles out before its call (the machine paused
// longer than the timeout between its initialize and its call) is
// answered 404, as it should be, and another is made for the call.
func TestSessionIdleChurn(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{SessionTimeout: 200 * time.Millisecond})
	http.DefaultClient.CloseIdleConnections()
	base := runtime.NumGoroutine()
	const n = 1000
	idledOut := 0
	for i := range n {
		s := rawInit(t, url, `{}`)
		for i%2 == 0 {
			resp := s.post(testCtx(t, 30*time.Second), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"c"}}}`)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound && idledOut < 100 {
				idledOut++
				s = rawInit(t, url, `{}`)
				continue
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"text":"c"`) {
				t.Fatalf("session %d: %s %.300s", i, resp.Status, body)
			}
			break
		}
	}
	if idledOut > 0 {
		t.Logf("%d sessions idled out before their calls; others were made for them", idledOut)
	}
	waitLong(t, "no live session", func() bool {
		g.live.mu.Lock()
		defer g.live.mu.Unlock()
		return len(g.live.by) == 0
	})
	sessions := func() int {
		k := 0
		for range g.server.Sessions() {
			k++
		}
		return k
	}
	waitLong(t, "no go-sdk session", func() bool { return sessions() == 0 })
	http.DefaultClient.CloseIdleConnections()
	if got := settleGoroutines(base + 10); got > base+10 {
		t.Errorf("%d goroutines after 1000 idle sessions ended, %d before", got, base)
	}
}

// waitLong waits for ok, a condition that takes many sessions' ends (which
// a loaded machine slows), for at most a minute.
func waitLong(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute", what)
		}
	}
}
