package replicatest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
)

// sessionReplica starts a gateway whose handshake-era sessions are kept
// in store (nil: in the process) behind a Guard, and returns its URL.
func (e *limitEnv) sessionReplica(store gateway.SessionStore) string {
	e.t.Helper()
	return e.sessionReplicaTTL(store, 0)
}

// sessionReplicaTTL is sessionReplica with the sessions' TTL (zero: the
// default).
func (e *limitEnv) sessionReplicaTTL(store gateway.SessionStore, ttl time.Duration) string {
	e.t.Helper()
	var keys []resourceserver.APIKey
	for p, k := range limitKeys {
		keys = append(keys, resourceserver.APIKey{Principal: p, Key: k})
	}
	guard, err := resourceserver.New(&resourceserver.Options{Resource: "http://127.0.0.1/mcp", APIKeys: keys, Logger: quietLimitLogger()})
	if err != nil {
		e.t.Fatal(err)
	}
	opts := &gateway.Options{Logger: quietLimitLogger()}
	if store != nil {
		opts.Sessions = &gateway.SessionOptions{Store: store, TTL: ttl}
	}
	g, err := gateway.New([]gateway.Server{{Name: "limited", Target: e.srv}}, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(limitCtx(e.t, 30*time.Second)); err != nil {
		e.t.Fatal(err)
	}
	ts := httptest.NewServer(guard.Handler(g))
	e.t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// sessionStores are the session stores on real servers.
func sessionStores(t testing.TB) map[string]func() (gateway.SessionStore, *testdb.Server) {
	return map[string]func() (gateway.SessionStore, *testdb.Server){
		"memory": func() (gateway.SessionStore, *testdb.Server) { return &gateway.MemorySessionStore{}, nil },
		"redis": func() (gateway.SessionStore, *testdb.Server) {
			srv, rdb := redisOf(t)
			return redisstore.NewSessionStore(rdb, nil), srv
		},
		"postgres": func() (gateway.SessionStore, *testdb.Server) {
			srv, pool := postgresOf(t)
			s, err := pgstore.NewSessionStore(context.Background(), pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s, srv
		},
	}
}

// BenchmarkSharedSessions measures what sharing handshake-era sessions
// costs a tool call (the read of the session's record, and the stream's
// record) against a gateway keeping them in the process, in the same run;
// and what a session costs a replica that does not hold it yet (its
// first request there makes it again: the time a client waits after its
// replica died).
func BenchmarkSharedSessions(b *testing.B) {
	stores := sessionStores(b)
	for _, name := range []string{"memory", "redis", "postgres"} {
		b.Run(name, func(b *testing.B) {
			e := newLimitEnv(b)
			store, srv := stores[name]()
			if name == "redis" {
				if _, err := testdb.RedisCommand(srv.Addr, "CONFIG", "SET", "appendfsync", "everysec"); err != nil {
					b.Fatal(err)
				}
			}
			plain := e.client(e.sessionReplica(nil), "alice")
			urlA, urlB := e.sessionReplica(store), e.sessionReplica(store)
			shared := e.client(urlA, "alice")
			ctx := limitCtx(b, 10*time.Minute)
			for range 20 {
				call(b, ctx, plain, "echo")
				call(b, ctx, shared, "echo")
			}
			b.ResetTimer()
			var tPlain, tShared time.Duration
			for range b.N {
				start := time.Now()
				call(b, ctx, plain, "echo")
				mid := time.Now()
				call(b, ctx, shared, "echo")
				tPlain += mid.Sub(start)
				tShared += time.Since(mid)
			}
			b.StopTimer()
			// A session made on A, its first request on B (made again
			// there), then its second (held).
			const remakes = 20
			var tFirst, tSecond time.Duration
			for range remakes {
				onA := e.client(urlA, "alice")
				start := time.Now()
				rawEcho(b, ctx, urlB, "alice", onA.ID(), 1)
				mid := time.Now()
				rawEcho(b, ctx, urlB, "alice", onA.ID(), 2)
				tFirst += mid.Sub(start)
				tSecond += time.Since(mid)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tPlain.Nanoseconds())/n, "plain-ns/call")
			b.ReportMetric(float64(tShared.Nanoseconds())/n, "shared-ns/call")
			b.ReportMetric(float64(tShared)/float64(tPlain), "shared/plain")
			b.ReportMetric(float64(tFirst.Nanoseconds())/remakes, "remade-first-ns/call")
			b.ReportMetric(float64(tFirst)/float64(tSecond), "remade-first/held")
		})
	}
}

// rawEcho calls echo in session id at url as principal, over plain HTTP
// (a client's request that reaches another replica than its session's
// first), and reads the whole answer.
func rawEcho(t testing.TB, ctx context.Context, url, principal, id string, n int) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, n)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+limitKeys[principal])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"text":"ok"`) {
		t.Fatalf("echo on another replica: %d %s", resp.StatusCode, b)
	}
}
