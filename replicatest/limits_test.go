package replicatest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
)

// The gateway's limits on replicas sharing a store: a gateway.Limits
// whose Store is a redisstore or pgstore LimitStore.

func limitCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func quietLimitLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// limitBearer sends an API key.
type limitBearer struct{ token string }

func (b limitBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// limitEnv is a server whose "hold" tool runs until the test lets it end,
// behind gateways that each sit behind a resource server accepting the
// API keys of alice, bob and mallory.
type limitEnv struct {
	t       testing.TB
	srv     *mcp.Server
	started chan struct{} // one value per hold call that began
	finish  chan struct{} // one value ends one hold call
}

var limitKeys = map[string]string{
	"alice":   "alice-key-0123456789abcdef",
	"bob":     "bob-key-0123456789abcdefgh",
	"mallory": "mallory-key-0123456789abcd",
}

func newLimitEnv(t testing.TB) *limitEnv {
	e := &limitEnv{t: t, started: make(chan struct{}, 1000), finish: make(chan struct{}, 1000)}
	e.srv = mcp.NewServer(&mcp.Implementation{Name: "limited", Version: "1"}, nil)
	type none struct{}
	mcp.AddTool(e.srv, &mcp.Tool{Name: "echo", Description: "Say ok."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	mcp.AddTool(e.srv, &mcp.Tool{Name: "hold", Description: "Run until told to end."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		e.started <- struct{}{}
		select {
		case <-e.finish:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	return e
}

// replica starts a gateway with limits behind a Guard and returns its URL.
func (e *limitEnv) replica(l *gateway.Limits) string {
	e.t.Helper()
	var keys []resourceserver.APIKey
	for p, k := range limitKeys {
		keys = append(keys, resourceserver.APIKey{Principal: p, Key: k})
	}
	guard, err := resourceserver.New(&resourceserver.Options{Resource: "http://127.0.0.1/mcp", APIKeys: keys, Logger: quietLimitLogger()})
	if err != nil {
		e.t.Fatal(err)
	}
	g, err := gateway.New([]gateway.Server{{Name: "limited", Target: e.srv}}, &gateway.Options{Logger: quietLimitLogger(), Limits: l})
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

// client connects principal to the gateway at url.
func (e *limitEnv) client(url, principal string) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: principal, Version: "1"}, nil)
	hc := &http.Client{Transport: limitBearer{limitKeys[principal]}}
	cs, err := c.Connect(limitCtx(e.t, 30*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls tool and returns the gateway's limit error (nil when the
// call went through); any other failure fails the test and is returned
// with code 0.
func call(t testing.TB, ctx context.Context, cs *mcp.ClientSession, tool string) *jsonrpc.Error {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
	var we *jsonrpc.Error
	switch {
	case err == nil && !res.IsError:
		return nil
	case errors.As(err, &we) && (we.Code == gateway.CodeLimited || we.Code == gateway.CodeLimitsUnavailable):
		return we
	}
	t.Errorf("%s: %+v, %v", tool, res, err)
	return &jsonrpc.Error{Message: tool + " failed"}
}

// limitData decodes the data of a limit error.
func limitData(t testing.TB, we *jsonrpc.Error) gateway.LimitData {
	t.Helper()
	var d gateway.LimitData
	if err := json.Unmarshal(we.Data, &d); err != nil || d.RetryAfterMs < 1 || d.Limit == "" {
		t.Fatalf("the data of %q: %s (%v): want a limit and retryAfterMs", we.Message, we.Data, err)
	}
	return d
}

// redisOf starts a Redis server and returns it with a client of it,
// closed by t's cleanup.
func redisOf(t testing.TB) (*testdb.Server, *redis.Client) {
	srv := testdb.Redis(t)
	opts, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return srv, rdb
}

// postgresOf starts a PostgreSQL server and returns it with a pool of
// connections to it, closed by t's cleanup.
func postgresOf(t testing.TB) (*testdb.Server, *pgxpool.Pool) {
	srv := testdb.Postgres(t)
	pool, err := pgxpool.New(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return srv, pool
}

// limitStores are the shared stores on real servers, each with its
// server.
func limitStores(t testing.TB) map[string]func() (gateway.LimitStore, *testdb.Server) {
	return map[string]func() (gateway.LimitStore, *testdb.Server){
		"redis": func() (gateway.LimitStore, *testdb.Server) {
			srv, rdb := redisOf(t)
			return redisstore.NewLimitStore(rdb, nil), srv
		},
		"postgres": func() (gateway.LimitStore, *testdb.Server) {
			srv, pool := postgresOf(t)
			s, err := pgstore.NewLimitStore(context.Background(), pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s, srv
		},
	}
}

// TestLimitsShared: three gateways share a store. Mallory hammers them
// all at once: exactly her burst goes through, the rest is refused, and
// alice's and bob's own limits are untouched. A cap of two calls in
// flight per principal holds across the replicas: a third call on any
// replica is refused until one ends. Then the store stops: a gateway
// that fails closed refuses calls with gateway.CodeLimitsUnavailable, one that
// fails open lets them through.
func TestLimitsShared(t *testing.T) {
	for name, open := range limitStores(t) {
		t.Run(name, func(t *testing.T) {
			store, srv := open()
			e := newLimitEnv(t)
			rules := []gateway.LimitRule{
				{Name: "calls", Per: "principal", Tool: "echo", Rate: 10, Period: time.Hour},
				{Name: "inflight", Per: "principal", Tool: "hold", Concurrent: 2},
			}
			var urls []string
			for range 3 {
				urls = append(urls, e.replica(&gateway.Limits{Rules: rules, Store: store, StoreTimeout: 20 * time.Second}))
			}
			ctx := limitCtx(t, 60*time.Second)

			// The hostile client: 60 calls at once, 20 on each replica
			// over two sessions (each under MaxCallsPerSession).
			var wg sync.WaitGroup
			var mu sync.Mutex
			passed, refused := 0, 0
			for i := range 6 {
				cs := e.client(urls[i%3], "mallory")
				for range 10 {
					wg.Go(func() {
						we := call(t, ctx, cs, "echo")
						mu.Lock()
						defer mu.Unlock()
						if we == nil {
							passed++
						} else if we.Code == gateway.CodeLimited && limitData(t, we).Kind == "rate" {
							refused++
						}
					})
				}
			}
			wg.Wait()
			if passed != 10 || refused != 50 {
				t.Errorf("mallory's 60 calls over 3 replicas: %d passed, %d refused; want 10 and 50", passed, refused)
			}
			for i, url := range urls {
				for _, p := range []string{"alice", "bob"} {
					if we := call(t, ctx, e.client(url, p), "echo"); we != nil {
						t.Errorf("%s on replica %d after mallory's flood: %v", p, i, we)
					}
				}
			}

			// Two holds of alice in flight, on replicas 0 and 1.
			a0, a1, a2 := e.client(urls[0], "alice"), e.client(urls[1], "alice"), e.client(urls[2], "alice")
			holds := make(chan *jsonrpc.Error, 2)
			for _, cs := range []*mcp.ClientSession{a0, a1} {
				go func() { holds <- call(t, ctx, cs, "hold") }()
			}
			for range 2 {
				select {
				case <-e.started:
				case <-ctx.Done():
					t.Fatal("the holds did not start")
				}
			}
			we := call(t, ctx, a2, "hold")
			if we == nil || we.Code != gateway.CodeLimited || limitData(t, we).Kind != "concurrency" {
				t.Fatalf("a third hold of alice on replica 2: %v, want gateway.CodeLimited (concurrency)", we)
			}
			if we := call(t, ctx, e.client(urls[2], "bob"), "echo"); we != nil {
				t.Errorf("bob's call while alice is at her cap: %v", we)
			}
			e.finish <- struct{}{}
			if we := <-holds; we != nil {
				t.Fatalf("a hold: %v", we)
			}
			go func() { holds <- call(t, ctx, a2, "hold") }()
			select {
			case <-e.started:
			case <-ctx.Done():
				t.Fatal("the hold after one ended did not start")
			}
			e.finish <- struct{}{}
			e.finish <- struct{}{}
			for range 2 {
				if we := <-holds; we != nil {
					t.Fatalf("a hold: %v", we)
				}
			}

			// The store stops.
			closed := e.client(urls[0], "bob")
			openURL := e.replica(&gateway.Limits{Rules: rules, Store: store, StoreTimeout: 20 * time.Second, FailOpen: true})
			opened := e.client(openURL, "bob")
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			we = call(t, ctx, closed, "echo")
			if we == nil || we.Code != gateway.CodeLimitsUnavailable || limitData(t, we).Kind != "store" {
				t.Errorf("a call with the store stopped, failing closed: %v, want gateway.CodeLimitsUnavailable", we)
			}
			if we := call(t, ctx, opened, "echo"); we != nil {
				t.Errorf("a call with the store stopped, failing open: %v", we)
			}
		})
	}
}

// BenchmarkLimits measures what the limits add to a tool call through the
// gateway (HTTP, the resource server's API key check, an in-process
// server): one rate limit and one concurrency cap per principal, in each
// store, against the same call to a gateway without limits in the same
// run. PostgreSQL runs with fsync off (internal/testdb), Redis with its
// append-only file synced every second. Metrics: plain-ns/call and limited-ns/call, check-ns (their
// difference) and limited/plain (the ratio).
func BenchmarkLimits(b *testing.B) {
	stores := limitStores(b)
	stores["memory"] = func() (gateway.LimitStore, *testdb.Server) { return nil, nil }
	for _, name := range []string{"memory", "redis", "postgres"} {
		open := stores[name]
		b.Run(name, func(b *testing.B) {
			e := newLimitEnv(b)
			store, srv := open()
			if name == "redis" {
				// The test server writes its append-only file at every
				// command (fsync always); production Redis runs everysec.
				if _, err := testdb.RedisCommand(srv.Addr, "CONFIG", "SET", "appendfsync", "everysec"); err != nil {
					b.Fatal(err)
				}
			}
			rules := []gateway.LimitRule{
				{Name: "rate", Per: "principal", Rate: 1_000_000_000, Period: time.Hour},
				{Name: "cap", Per: "principal", Concurrent: 1000},
			}
			plain := e.client(e.replica(nil), "alice")
			limited := e.client(e.replica(&gateway.Limits{Rules: rules, Store: store}), "alice")
			ctx := limitCtx(b, 10*time.Minute)
			warm := func(n int) {
				for range n {
					if we := call(b, ctx, plain, "echo"); we != nil {
						b.Fatal(we)
					}
					if we := call(b, ctx, limited, "echo"); we != nil {
						b.Fatal(we)
					}
				}
			}
			warm(20)
			b.ResetTimer()
			var tPlain, tLimited time.Duration
			for range b.N {
				start := time.Now()
				if we := call(b, ctx, plain, "echo"); we != nil {
					b.Fatal(we)
				}
				mid := time.Now()
				if we := call(b, ctx, limited, "echo"); we != nil {
					b.Fatal(we)
				}
				tPlain += mid.Sub(start)
				tLimited += time.Since(mid)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tPlain.Nanoseconds())/n, "plain-ns/call")
			b.ReportMetric(float64(tLimited.Nanoseconds())/n, "limited-ns/call")
			b.ReportMetric(float64((tLimited-tPlain).Nanoseconds())/n, "check-ns")
			b.ReportMetric(float64(tLimited)/float64(tPlain), "limited/plain")
		})
	}
}
