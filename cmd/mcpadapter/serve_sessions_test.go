package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// balancer is a round-robin HTTP load balancer with no affinity, as
// plain as a proxy gets: each request goes to the next backend over a
// connection of its own (nginx keeps no connection to a backend open
// unless told to), and a backend that refuses the connection is skipped
// for that request (as nginx's proxy_next_upstream does by default). A
// kept connection to a replica just killed would fail a request that
// the next replica would answer.
type balancer struct {
	rt       http.RoundTripper
	backends []*url.URL
	next     atomic.Int64
	mu       sync.Mutex
	served   map[string]int // requests answered, by backend host
	busy     map[string]int // requests being answered, by backend host
}

func newBalancer(t *testing.T, urls ...string) (*balancer, string) {
	t.Helper()
	rt := http.DefaultTransport.(*http.Transport).Clone()
	rt.DisableKeepAlives = true
	t.Cleanup(rt.CloseIdleConnections)
	b := &balancer{rt: rt, served: map[string]int{}, busy: map[string]int{}}
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		b.backends = append(b.backends, pu)
	}
	ts := httptest.NewServer(b)
	t.Cleanup(ts.Close)
	return b, ts.URL + b.backends[0].Path
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	backends := b.backends
	b.mu.Unlock()
	start := int(b.next.Add(1))
	for i := range backends {
		be := backends[(start+i)%len(backends)]
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = be.Scheme, be.Host, be.Host, ""
		out.Body = io.NopCloser(bytes.NewReader(body))
		b.count(be.Host, &b.busy, 1)
		resp, err := b.rt.RoundTrip(out)
		if err != nil {
			b.count(be.Host, &b.busy, -1)
			var oe *net.OpError
			if errors.As(err, &oe) && oe.Op == "dial" {
				continue // down: the next one
			}
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		copyFlushing(w, resp.Body)
		resp.Body.Close()
		b.count(be.Host, &b.busy, -1)
		b.count(be.Host, &b.served, 1)
		return
	}
	http.Error(w, "no backend is up", http.StatusBadGateway)
}

// add adds a backend.
func (b *balancer) add(u *url.URL) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = append(b.backends, u)
}

func (b *balancer) count(host string, m *map[string]int, d int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	(*m)[host] += d
}

// busyOn returns a backend host answering a request now, or "".
func (b *balancer) busyOn() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for h, n := range b.busy {
		if n > 0 {
			return h
		}
	}
	return ""
}

func (b *balancer) servedBy(host string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.served[host]
}

// copyFlushing copies an event stream as it comes.
func copyFlushing(w http.ResponseWriter, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// TestServeSessionsReplicaKilled: three `serve` replicas sharing their
// clients' sessions in Redis (and again in PostgreSQL), behind a
// round-robin balancer with no affinity. A handshake-era client's
// requests go to every replica; a replica killed with SIGKILL between two
// calls loses the client nothing; a replica killed in the middle of a
// call fails that call with an error (the server ran it once: it is not
// repeated behind the client's back), and the client's next call
// succeeds on another replica.
func TestServeSessionsReplicaKilled(t *testing.T) {
	for _, db := range []struct {
		name  string
		start func(testing.TB) *testdb.Server
	}{{"redis", testdb.Redis}, {"postgres", testdb.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			const key = "alice-key-0123456789abcdef"
			store := db.start(t)
			srv, st := testserver.NewWithState(testserver.Options{Name: "alpha", Era: testserver.Legacy})
			// confirm asks the user, waiting at most 5 s for the answer (a
			// server whose question goes to a replica that dies would
			// otherwise wait for ever, and its test server with it).
			var confirms atomic.Int64
			mcp.AddTool(srv, &mcp.Tool{Name: "confirm", Description: "Ask the user to confirm."},
				func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
					confirms.Add(1)
					ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					defer cancel()
					r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Go on?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
					if err != nil {
						return nil, nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Action}}}, nil, nil
				})
			up := testserver.StartStreamable(t, srv)
			dir := t.TempDir()
			cfg := filepath.Join(dir, "mcp.json")
			if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, up.URL)), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"KEY_ALICE=" + key, "STORE=" + store.URL}
			args := []string{"--config", cfg, "--listen", "127.0.0.1:0", "--api-key", "alice=KEY_ALICE", "--store-env", "STORE", "--store-timeout", "20s"}
			var procs []*serveProc
			var urls []string
			for range 3 {
				p := startServe(t, dir, env, args...)
				procs = append(procs, p)
				urls = append(urls, p.URL)
			}
			lb, lbURL := newBalancer(t, urls...)
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			asked, answer := make(chan struct{}, 1), make(chan struct{})
			c := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- struct{}{}
					select {
					case <-answer:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
				},
			})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lbURL, HTTPClient: &http.Client{Transport: bearerRT{key}}, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			echo := func(what string) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": what}})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %+v\nA: %s\nB: %s\nC: %s", what, err, res, procs[0].stderr, procs[1].stderr, procs[2].stderr)
				}
			}
			for i := range 6 {
				echo(fmt.Sprintf("call %d", i))
			}
			for i, p := range procs {
				u, _ := url.Parse(p.URL)
				if lb.servedBy(u.Host) == 0 {
					t.Errorf("replica %d served none of the session's requests", i)
				}
			}
			// Killed between two calls: nothing is lost.
			_ = procs[0].stop(syscall.SIGKILL)
			for i := range 4 {
				echo(fmt.Sprintf("after the kill %d", i))
			}
			// Killed in the middle of a call.
			ended := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3000}})
				ended <- err
			}()
			if err := st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") > 0 }); err != nil {
				t.Fatal(err)
			}
			host := lb.busyOn()
			var victim *serveProc
			for _, p := range procs[1:] {
				if strings.Contains(p.URL, host) && host != "" {
					victim = p
				}
			}
			if victim == nil {
				t.Fatalf("no live replica is answering the call (busy: %q)", host)
			}
			_ = victim.stop(syscall.SIGKILL)
			select {
			case err := <-ended:
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != gateway.CodeCallInterrupted || !strings.Contains(we.Message, "repeat the request if it is safe to") {
					t.Errorf("the call whose replica was killed ended with %v; want the gateway's error saying the answer was lost", err)
				}
			case <-ctx.Done():
				t.Fatal("the call whose replica was killed never ended")
			}
			echo("after the second kill")
			if n := st.Calls("slow"); n != 1 {
				t.Errorf("the server ran the interrupted call %d times, want once", n)
			}
			// Killed while the call waits for the user's answer: the answer
			// reaches a replica that cannot hand it to the server's call,
			// and the call ends with the same error. The last replica is
			// the only one left: start two more, sharing the store.
			for range 2 {
				p := startServe(t, dir, env, args...)
				procs = append(procs, p)
				u, _ := url.Parse(p.URL)
				lb.add(u)
			}
			booked := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm"})
				booked <- err
			}()
			select {
			case <-asked:
			case err := <-booked:
				t.Fatalf("the call ended before it asked: %v", err)
			case <-ctx.Done():
				t.Fatal("the question never came")
			}
			host = lb.busyOn()
			victim = nil
			for _, p := range procs {
				if host != "" && strings.Contains(p.URL, host) {
					victim = p
				}
			}
			if victim == nil {
				t.Fatalf("no replica is answering the call that asks (busy: %q)", host)
			}
			_ = victim.stop(syscall.SIGKILL)
			close(answer)
			select {
			case err := <-booked:
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != gateway.CodeCallInterrupted {
					t.Errorf("the answered call whose replica was killed ended with %v; want the gateway's error saying the answer was lost", err)
				}
			case <-ctx.Done():
				t.Fatal("the answered call whose replica was killed never ended")
			}
			echo("after the third kill")
			if n := confirms.Load(); n != 1 {
				t.Errorf("the server ran the call that asked %d times, want once", n)
			}
		})
	}
}
