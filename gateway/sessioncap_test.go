package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// capAnswer is what a raw initialize was answered.
type capAnswer struct {
	status int
	id     string // Mcp-Session-Id
	body   string
}

// rawInitialize sends an initialize request without a session, as a
// client of 2025-11-25 does, with token as its bearer token (none when
// ""), over hc.
func rawInitialize(t testing.TB, hc *http.Client, url, token string) capAnswer {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // not testCtx: it holds each until the test ends
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return capAnswer{status: resp.StatusCode, id: resp.Header.Get("Mcp-Session-Id"), body: string(b)}
}

// rawDelete ends session id (DELETE) and fails the test unless it is
// answered 204.
func rawDelete(t testing.TB, hc *http.Client, url, id, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", id)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE of session %s: %s", id, resp.Status)
	}
}

// capRefusal reads the JSON-RPC error of a refused request.
func capRefusal(t testing.TB, a capAnswer) (code int64, msg string, data map[string]any) {
	t.Helper()
	var m struct {
		Error struct {
			Code    int64          `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("a refusal that is not a JSON-RPC error (%d): %q", a.status, a.body)
	}
	return m.Error.Code, m.Error.Message, m.Error.Data
}

// TestSessionCapHostileClient: a client opening handshake-era sessions
// without end and holding each busy (its standalone stream open), against
// a gateway capped at 50: the first 50 are made, each of the next 150 is
// refused with 503 and a JSON-RPC error naming
// the cap, its value and its flag, logged once, with nothing made for
// it (go-sdk's sessions, the gateway's records, heap and goroutines stay
// as they were at 50); a DELETE makes room for one more, go-sdk clients
// are refused and let in alike, and Close gives every place back.
func TestSessionCapHostileClient(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	logs := &lockedBuffer{}
	const max, attempts = 50, 200
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: max,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	t.Cleanup(hc.CloseIdleConnections)
	var ids []string
	refused := 0
	var heapAt50 int64
	var goroutinesAt50 int
	for i := range attempts {
		if i == max {
			heapAt50, goroutinesAt50 = liveHeap(), runtime.NumGoroutine()
		}
		a := rawInitialize(t, hc, url, "")
		if a.status == http.StatusOK && a.id != "" {
			ids = append(ids, a.id)
			openStream(t, url, a.id, "")
			continue
		}
		refused++
		if a.status != http.StatusServiceUnavailable || a.id != "" {
			t.Fatalf("attempt %d: %d %q (session %q), want 503 and no session", i, a.status, a.body, a.id)
		}
		code, msg, data := capRefusal(t, a)
		if code != CodeTooManySessions || !strings.Contains(msg, "sessions it allows: 50 (") || !strings.Contains(msg, "--max-sessions") || !strings.Contains(msg, "MaxSessions") ||
			data["limit"] != "sessions" || data["max"] != float64(max) {
			t.Fatalf("attempt %d refused with %d %q %v", i, code, msg, data)
		}
	}
	heapGrowth, goroutineGrowth := liveHeap()-heapAt50, runtime.NumGoroutine()-goroutinesAt50
	t.Logf("%d attempts past the cap grew the heap by %d bytes and the goroutines by %d", attempts-max, heapGrowth, goroutineGrowth)
	if len(ids) != max || refused != attempts-max {
		t.Fatalf("%d sessions made and %d refused of %d attempts, want %d and %d", len(ids), refused, attempts, max, attempts-max)
	}
	if n := countSessions(g.server); n != max || liveCount(g) != max {
		t.Fatalf("go-sdk holds %d sessions and the gateway %d, want %d", n, liveCount(g), max)
	}
	// Made, each of the 150 would hold about 9 KiB (1.3 MiB) and a
	// goroutine; refused, the heap holds their log lines (about 50 KiB in
	// logs) and nothing of the gateway's (a heap profile shows).
	if heapGrowth > 512<<10 || goroutineGrowth > 8 {
		t.Errorf("150 refused sessions grew the heap by %d bytes and the goroutines by %d", heapGrowth, goroutineGrowth)
	}
	if n := strings.Count(logs.String(), "a client session is refused"); n != attempts-max {
		t.Errorf("%d refusals logged, want %d:\n%s", n, attempts-max, logs.String())
	}
	if !strings.Contains(logs.String(), "cap=MaxSessions max=50") {
		t.Errorf("the refusals' log lines name neither the cap nor its value:\n%s", firstLine(logs.String()))
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "late", Version: "1"}, nil)
	if cs, err := c.Connect(testCtx(t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: v1125}); err == nil {
		_ = cs.Close()
		t.Fatal("a go-sdk client got a session past the cap")
	} else {
		t.Logf("a go-sdk client past the cap: %v", err)
	}
	rawDelete(t, hc, url, ids[0], "")
	a := rawInitialize(t, hc, url, "")
	if a.status != http.StatusOK || a.id == "" {
		t.Fatalf("after a DELETE: %d %q, want a session", a.status, a.body)
	}
	openStream(t, url, a.id, "")
	if a := rawInitialize(t, hc, url, ""); a.status != http.StatusServiceUnavailable {
		t.Fatalf("past the cap again: %d %q, want 503", a.status, a.body)
	}
	rawDelete(t, hc, url, ids[1], "")
	cs := connect(t, url, v1125, nil)
	if res, err := cs.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "in"}}); err != nil || texts(res) != "in" {
		t.Fatalf("a go-sdk client let in after a DELETE: %v %v", err, texts(res))
	}
	if all, _ := g.slots.taken(""); all != max {
		t.Errorf("%d places taken, want %d", all, max)
	}
	_ = g.Close()
	waitFor(t, "every place given back on Close", func() bool { all, _ := g.slots.taken(""); return all == 0 })
}

// TestSessionCapPrincipal: behind a bearer-token check, one principal at
// its cap (a quarter of MaxSessions by default), each of its sessions
// with its standalone stream open, is refused with 429 and
// an error naming the per-principal cap, while another principal still
// gets sessions; sessions ended by the idle timeout give their places
// back. (The timeout is an hour until the checks are done, so that no
// session idles out while they are made and counted, however slow the
// machine; then 300 ms.)
func TestSessionCapPrincipal(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	const idle = 300 * time.Millisecond
	g, url := startForPrincipals(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 20, SessionTimeout: time.Hour})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	for i := range 5 {
		a := rawInitialize(t, hc, url, "alice")
		if a.status != http.StatusOK || a.id == "" {
			t.Fatalf("alice's session %d: %d %q", i, a.status, a.body)
		}
		openStream(t, url, a.id, "alice")
	}
	a := rawInitialize(t, hc, url, "alice")
	if a.status != http.StatusTooManyRequests || a.id != "" {
		t.Fatalf("alice's 6th session: %d %q, want 429", a.status, a.body)
	}
	code, msg, data := capRefusal(t, a)
	if code != CodeTooManySessions || !strings.Contains(msg, "one principal may hold: 5 (") || !strings.Contains(msg, "--max-sessions-per-principal") ||
		data["limit"] != "sessionsPerPrincipal" || data["max"] != float64(5) {
		t.Fatalf("alice's 6th session refused with %d %q %v", code, msg, data)
	}
	cs := bearerClient(t, url, "bob")
	if res, err := cs.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bob"}}); err != nil || texts(res) != "bob" {
		t.Fatalf("bob's call while alice is at her cap: %v %v", err, texts(res))
	}
	if all, mine := g.slots.taken("alice"); all != 6 || mine != 5 {
		t.Fatalf("%d places taken, %d by alice; want 6 and 5", all, mine)
	}
	idleFor(g, idle)
	waitFor(t, "alice's idle sessions' end", func() bool { _, mine := g.slots.taken("alice"); return mine == 0 })
	if a := rawInitialize(t, hc, url, "alice"); a.status != http.StatusOK || a.id == "" {
		t.Fatalf("alice once her sessions ended: %d %q", a.status, a.body)
	}
}

// idleFor makes g's sessions end once idle for d, as Options.SessionTimeout
// d would: those without a POST in flight d from now, the others d after
// their last POST is answered, and the sessions made later.
func idleFor(g *Gateway, d time.Duration) {
	g.live.mu.Lock()
	defer g.live.mu.Unlock()
	g.live.timeout = d
	for _, ls := range g.live.by {
		if ls.idle != nil && ls.posts == 0 {
			ls.idle.Reset(d)
		}
	}
}

// TestSessionCapReplicas: with shared sessions the cap is per replica and
// counts the copies of sessions made on other replicas: a replica at its
// cap, its sessions' standalone streams open, refuses a new session and a
// copy alike, and takes the copy once a
// session of its own ends.
func TestSessionCapReplicas(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicasWith(t, []SessionStore{store, store}, old.URL, Options{MaxSessions: 2, MaxSessionsPerPrincipal: -1})
	a, b := rs[0].ts.URL+"/mcp", rs[1].ts.URL+"/mcp"
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	var onA []string
	for i := range 2 {
		s := rawInitialize(t, hc, a, "carol")
		if s.status != http.StatusOK || s.id == "" {
			t.Fatalf("session %d on A: %d %q", i, s.status, s.body)
		}
		onA = append(onA, s.id)
		openStream(t, a, s.id, "carol")
	}
	if s := rawInitialize(t, hc, a, "carol"); s.status != http.StatusServiceUnavailable {
		t.Fatalf("a 3rd session on A: %d %q, want 503", s.status, s.body)
	}
	cs := bearerClient(t, b, "dave") // made on B
	rs2 := &rawSession{t: t, url: a, id: cs.ID()}
	resp := rs2.postAs(testCtx(t, 10*time.Second), "dave", `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "--max-sessions") {
		t.Fatalf("a request on A of a session made on B, A at its cap: %s %q, want 503 and the cap's error", resp.Status, body)
	}
	rawDelete(t, hc, a, onA[0], "carol")
	waitFor(t, "A's place given back", func() bool { all, _ := rs[0].g.slots.taken(""); return all == 1 })
	resp = rs2.postAs(testCtx(t, 10*time.Second), "dave", `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id":8`) {
		t.Fatalf("a request on A of a session made on B, once A has room: %s %q", resp.Status, body)
	}
	if all, _ := rs[0].g.slots.taken(""); all != 2 {
		t.Errorf("A holds %d places, want 2 (its own and the copy)", all)
	}
}

// postAs sends one message of the session with token as its bearer token
// and returns the open response.
func (s *rawSession) postAs(ctx context.Context, token, body string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// heldStreams returns the streams of session id g's event store holds.
func heldStreams(g *Gateway, id string) int {
	g.events.mu.Lock()
	defer g.events.mu.Unlock()
	if ss := g.events.sessions[id]; ss != nil {
		return len(ss.streams)
	}
	return 0
}

// pingSession sends n pings of session id over workers keep-alive
// connections, each answered on go-sdk's handler (a stream each), and
// fails the test on any answer that is not the ping's.
func pingSession(t *testing.T, url, id string, n, workers int) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer hc.CloseIdleConnections()
	ctx := testCtx(t, 5*time.Minute)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+100)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("Mcp-Protocol-Version", v1125)
				resp, err := hc.Do(req)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(b, fmt.Appendf(nil, `"id":%d,"result":{}`, i+100)) {
					errs <- fmt.Errorf("ping %d: %s %q %v", i, resp.Status, b, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestSessionPingsHoldBoundedStore: a session that pings 100,000 times
// (20,000 under the race detector, which makes each ping about ten times
// as long) holds at most the event store's bound of streams, each ping a
// POST that go-sdk's handler answers on a stream of its own, and the
// gateway's heap grows by far less than the streams' records would take
// (about 210 bytes each: 21 MB, 4.2 MB); go-sdk's handler itself keeps
// nothing per answered request.
func TestSessionPingsHoldBoundedStore(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, nil)
	s := rawInit(t, url, `{}`)
	pingSession(t, url, s.id, 1000, 4)
	before := liveHeap()
	pings := 100_000
	if raceDetector {
		pings = 20_000
	}
	pingSession(t, url, s.id, pings, 4)
	growth := liveHeap() - before
	held := heldStreams(g, s.id)
	t.Logf("%d pings: %d streams held, heap grew by %d bytes", pings, held, growth)
	if held > defaultMaxStreams+1 {
		t.Errorf("%d streams held after %d pings, want at most %d besides the standalone one", held, pings, defaultMaxStreams)
	}
	if growth > 2<<20 {
		t.Errorf("%d pings grew the heap by %d bytes", pings, growth)
	}
}

// TestSessionPingsSharedBoundedStore: with shared sessions, a session's
// pings leave at most the bound of streams in the memory store and of
// their records in the session store.
func TestSessionPingsSharedBoundedStore(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicasWith(t, []SessionStore{store}, old.URL, Options{})
	url := rs[0].ts.URL + "/mcp"
	cs := bearerClient(t, url, "erin")
	ctx := testCtx(t, 2*time.Minute)
	for i := range 500 {
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
	}
	store.mu.Lock()
	records := 0
	for k := range store.recs {
		if strings.HasPrefix(k, "stream.") {
			records++
		}
	}
	store.mu.Unlock()
	if held := heldStreams(rs[0].g, cs.ID()); held > defaultMaxStreams+1 || records > defaultMaxStreams {
		t.Errorf("after 500 pings: %d streams held and %d stream records stored, want at most %d", held, records, defaultMaxStreams)
	}
}
