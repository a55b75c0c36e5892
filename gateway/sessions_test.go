//lint:file-ignore SA1019 handshake-era clients set their log level, which the session carries

package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replica is one gateway process of a shared-session test: a gateway
// and its HTTP server.
type replica struct {
	g  *Gateway
	ts *httptest.Server
	// hits counts the requests it served.
	hits atomic.Int64
	down atomic.Bool
}

// startReplicas starts n gateways in front of the same server, sharing
// store, each behind a bearer-token check that makes the token the
// principal.
func startReplicas(t *testing.T, n int, store SessionStore, upstream string) []*replica {
	t.Helper()
	stores := make([]SessionStore, n)
	for i := range stores {
		stores[i] = store
	}
	return startReplicasWith(t, stores, upstream, Options{})
}

// startReplicasWith is startReplicas with a store for each replica (all
// in front of the same records, each maybe with a kill switch) and opts
// (its Logger and Sessions set here).
func startReplicasWith(t *testing.T, stores []SessionStore, upstream string, opts Options) []*replica {
	t.Helper()
	return startReplicasHook(t, stores, upstream, opts, nil)
}

// startReplicasHook is startReplicasWith with before, when not nil,
// called with each gateway before it starts.
func startReplicasHook(t *testing.T, stores []SessionStore, upstream string, opts Options, before func(*Gateway)) []*replica {
	t.Helper()
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	var rs []*replica
	for _, store := range stores {
		o := opts
		o.Logger, o.Sessions = quietLogger(t), &SessionOptions{Store: store}
		g, err := New([]Server{{Name: "s", Target: upstream}}, &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Close() })
		if before != nil {
			before(g)
		}
		if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
			t.Fatal(err)
		}
		r := &replica{g: g}
		r.ts = httptest.NewServer(auth.RequireBearerToken(verify, nil)(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r.hits.Add(1)
			g.ServeHTTP(w, req)
		})))
		t.Cleanup(r.ts.Close)
		rs = append(rs, r)
	}
	return rs
}

// roundRobin is a proxy that sends each request to the next live replica,
// with no affinity: a plain load balancer.
func roundRobin(t *testing.T, rs []*replica) string {
	t.Helper()
	var next atomic.Int64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			for range len(rs) {
				r := rs[int(next.Add(1))%len(rs)]
				if r.down.Load() {
					continue
				}
				u, _ := url.Parse(r.ts.URL)
				pr.SetURL(u)
				return
			}
		},
		FlushInterval: -1,
		ErrorLog:      nil,
	}
	ts := httptest.NewServer(fullDuplex(proxy))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// fullDuplex serves h with the request's body left to h while its
// response is written (http.ResponseController.EnableFullDuplex). A
// ReverseProxy needs it: net/http's HTTP/1 server otherwise reads what is
// left of the body and closes it when the response's header is written,
// and the proxy's transport, still to read the body's end when a replica
// answers that fast (an SSE stream's header comes at once), fails to
// read it, takes that for a failed request and closes its connection to
// the replica, cutting the stream it relays.
func fullDuplex(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		h.ServeHTTP(w, r)
	})
}

// kill stops a replica at once: its connections are cut, and the proxy
// sends nothing more to it.
func (r *replica) kill() {
	r.down.Store(true)
	r.ts.CloseClientConnections()
	_ = r.g.Close()
}

func bearerClient(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: token, Version: "1"}, nil)
	cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestSharedSessionsAnyReplica: a handshake-era client behind a
// round-robin proxy (no affinity) in front of three replicas: every
// replica serves its requests, its log level follows it, and when a
// replica is killed its next requests are served by the others.
func TestSharedSessionsAnyReplica(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 3, store, up.URL)
	cs := bearerClient(t, roundRobin(t, rs), "alice")
	ctx := testCtx(t, 60*time.Second)
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call := func(i int) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError || !strings.Contains(texts(res), "hi") {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	for i := range 9 {
		call(i)
	}
	for i, r := range rs {
		if r.hits.Load() == 0 {
			t.Errorf("replica %d served nothing", i)
		}
		if r.g.shared.held(cs.ID()) == nil {
			t.Errorf("replica %d does not hold the session after serving it", i)
		}
		if lv := levelOf(r.g, cs.ID()); lv != "debug" {
			t.Errorf("replica %d has the session's log level %q, want debug", i, lv)
		}
	}
	rs[1].kill()
	for i := range 6 {
		call(100 + i)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("listing after a replica died: %v", err)
	}
}

func levelOf(g *Gateway, id string) string {
	ss := g.shared.held(id)
	if ss == nil {
		return ""
	}
	return g.logLevel(ss)
}

// TestSharedSessionsEndEverywhere: a session a client ends on one replica
// (DELETE) is gone on all of them, and a session is served only to its
// own principal.
func TestSharedSessionsEndEverywhere(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 2, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	// The session is made on replica 0 and used on replica 1.
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	id := cs.ID()
	post := func(r *replica, token, method string) int {
		t.Helper()
		code, _, _ := rawRequest(t, ctx, method, r.ts.URL+"/mcp", token, id, v1125, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
		return code
	}
	if code := post(rs[1], "alice", http.MethodPost); code != http.StatusOK {
		t.Fatalf("alice's session on the other replica: %d", code)
	}
	if code := post(rs[1], "bob", http.MethodPost); code != http.StatusForbidden {
		t.Errorf("bob with alice's session id: %d, want 403", code)
	}
	if code := post(rs[1], "alice", http.MethodDelete); code != http.StatusNoContent {
		t.Fatalf("DELETE on the other replica: %d", code)
	}
	for i, r := range rs {
		if code := post(r, "alice", http.MethodPost); code != http.StatusNotFound {
			t.Errorf("replica %d after DELETE: %d, want 404", i, code)
		}
	}
	if _, err := cs.ListTools(ctx, nil); err == nil || !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("the client's session after it was ended elsewhere: %v, want ErrSessionMissing", err)
	}
}

// TestSharedSessionsHostileIDs: session ids a client makes up are refused
// without reaching the store, and a store that fails refuses the request
// (never serves a session unchecked).
func TestSharedSessionsHostileIDs(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &countingStore{}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	for _, id := range []string{"x", strings.Repeat("A", 27), strings.Repeat("a", 26), "AAAAAAAAAAAAAAAAAAAAAAAAA1", strings.Repeat("\u00c4", 13), "../../../../etc/passwd"} {
		if code, _, _ := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", id, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != http.StatusNotFound {
			t.Errorf("session id %q: %d, want 404", id, code)
		}
	}
	if n := store.loads.Load(); n != 0 {
		t.Errorf("made-up ids reached the store %d times", n)
	}
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	store.fail.Store(true)
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Error("a request was served while the session store failed")
	}
	store.fail.Store(false)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("after the store came back: %v", err)
	}
}

// countingStore is a MemorySessionStore that counts loads and can fail.
type countingStore struct {
	MemorySessionStore
	loads atomic.Int64
	fail  atomic.Bool
}

var errStoreDown = errors.New("store down")

func (s *countingStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	s.loads.Add(1)
	if s.fail.Load() {
		return nil, errStoreDown
	}
	return s.MemorySessionStore.LoadSession(ctx, id)
}

// TestSharedSessionsRemadeOnce: many requests of one session arriving at
// once at a replica that does not hold it make it there once.
func TestSharedSessionsRemadeOnce(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 2, store, up.URL)
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	ctx := testCtx(t, 30*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs[1].ts.URL+"/mcp", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)))
			req.Header.Set("Authorization", "Bearer alice")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", cs.ID())
			req.Header.Set("Mcp-Protocol-Version", v1125)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				errs <- fmt.Errorf("%s: %s", resp.Status, b)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := 0
	for ss := range rs[1].g.server.Sessions() {
		if ss.ID() == cs.ID() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("replica 1 holds %d sessions with the id, want 1", n)
	}
}

// TestRoundRobinRelaysStreamsWhole: the round-robin proxy of the
// shared-session tests relays a POST's stream whole when the replica
// sends the stream's header before the POST's body has come (as a
// gateway sends it right after reading the body): the proxy's server
// holds the body for the proxy's transport while the header goes out,
// and the transport's connection to the replica stays up to the stream's
// last event. The proxy's transport is cut only when it reads the body's
// end after the header went out, a window of a few instructions: the
// stream is relayed 50 times.
func TestRoundRobinRelaysStreamsWhole(t *testing.T) {
	for i := range 50 {
		started, saw := make(chan struct{}), make(chan struct{})
		up := httptest.NewServer(fullDuplex(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: prime\n\n")
			w.(http.Flusher).Flush()
			close(started)
			body, err := io.ReadAll(r.Body)
			fmt.Fprintf(w, "data: got %s %v\n\n", body, err)
			w.(http.Flusher).Flush()
			select {
			case <-saw:
				fmt.Fprint(w, "data: end\n\n")
			case <-r.Context().Done():
			}
		})))
		url := roundRobin(t, []*replica{{ts: up}})
		pr, pw := io.Pipe()
		go func() {
			<-started
			_, _ = pw.Write([]byte("hello"))
			_ = pw.Close()
		}()
		req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodPost, url, pr)
		req.ContentLength = 5
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		var events []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); l != "" {
				events = append(events, l)
				if l == "data: got hello <nil>" {
					close(saw)
				}
				if l == "data: end" {
					break
				}
			}
		}
		resp.Body.Close()
		up.Close()
		if len(events) == 0 || events[len(events)-1] != "data: end" {
			t.Fatalf("stream %d through the proxy: %q, %v; want prime, got hello, end", i, events, sc.Err())
		}
	}
}
