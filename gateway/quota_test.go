package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
)

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
func (e *limitEnv) replica(l *Limits) string {
	e.t.Helper()
	var keys []resourceserver.APIKey
	for p, k := range limitKeys {
		keys = append(keys, resourceserver.APIKey{Principal: p, Key: k})
	}
	guard, err := resourceserver.New(&resourceserver.Options{Resource: "http://127.0.0.1/mcp", APIKeys: keys, Logger: quietLogger(e.t)})
	if err != nil {
		e.t.Fatal(err)
	}
	g, err := New([]Server{{Name: "limited", Target: e.srv}}, &Options{Logger: quietLogger(e.t), Limits: l})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(e.t, 30*time.Second)); err != nil {
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
	hc := &http.Client{Transport: bearer{limitKeys[principal]}}
	cs, err := c.Connect(testCtx(e.t, 30*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
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
	case errors.As(err, &we) && (we.Code == CodeLimited || we.Code == CodeLimitsUnavailable):
		return we
	}
	t.Errorf("%s: %+v, %v", tool, res, err)
	return &jsonrpc.Error{Message: tool + " failed"}
}

// limitData decodes the data of a limit error.
func limitData(t testing.TB, we *jsonrpc.Error) LimitData {
	t.Helper()
	var d LimitData
	if err := json.Unmarshal(we.Data, &d); err != nil || d.RetryAfterMs < 1 || d.Limit == "" {
		t.Fatalf("the data of %q: %s (%v): want a limit and retryAfterMs", we.Message, we.Data, err)
	}
	return d
}

// TestLimitsInMemory: one gateway, limits in memory: each principal has
// its own rate limit; a call over it is refused with CodeLimited naming
// the limit and when to retry, and holds no slot.
func TestLimitsInMemory(t *testing.T) {
	e := newLimitEnv(t)
	url := e.replica(&Limits{Rules: []LimitRule{{Name: "per-user", Per: "principal", Rate: 3, Period: time.Hour}}})
	ctx := testCtx(t, 30*time.Second)
	alice, bob := e.client(url, "alice"), e.client(url, "bob")
	for i := range 3 {
		if we := call(t, ctx, alice, "echo"); we != nil {
			t.Fatalf("alice's call %d: %v", i+1, we)
		}
	}
	we := call(t, ctx, alice, "echo")
	if we == nil || we.Code != CodeLimited {
		t.Fatalf("alice's 4th call: %v, want CodeLimited", we)
	}
	d := limitData(t, we)
	if d.Limit != "per-user" || d.Kind != "rate" || d.RetryAfterMs > int64(time.Hour/time.Millisecond) || !strings.Contains(we.Message, `principal "alice"`) || !strings.Contains(we.Message, "retry after") {
		t.Errorf("the refusal: %q %+v", we.Message, d)
	}
	for i := range 3 {
		if we := call(t, ctx, bob, "echo"); we != nil {
			t.Fatalf("bob's call %d: %v", i+1, we)
		}
	}
}

// limitStores are the shared stores on real servers, each with its
// server.
func limitStores(t testing.TB) map[string]func() (LimitStore, *testdb.Server) {
	return map[string]func() (LimitStore, *testdb.Server){
		"redis": func() (LimitStore, *testdb.Server) {
			srv := testdb.Redis(t)
			opts, err := redis.ParseURL(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			rdb := redis.NewClient(opts)
			t.Cleanup(func() { rdb.Close() })
			return redisstore.NewLimitStore(rdb, nil), srv
		},
		"postgres": func() (LimitStore, *testdb.Server) {
			srv := testdb.Postgres(t)
			pool, err := pgxpool.New(context.Background(), srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
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
// that fails closed refuses calls with CodeLimitsUnavailable, one that
// fails open lets them through.
func TestLimitsShared(t *testing.T) {
	for name, open := range limitStores(t) {
		t.Run(name, func(t *testing.T) {
			store, srv := open()
			e := newLimitEnv(t)
			rules := []LimitRule{
				{Name: "calls", Per: "principal", Tool: "echo", Rate: 10, Period: time.Hour},
				{Name: "inflight", Per: "principal", Tool: "hold", Concurrent: 2},
			}
			var urls []string
			for range 3 {
				urls = append(urls, e.replica(&Limits{Rules: rules, Store: store, StoreTimeout: 20 * time.Second}))
			}
			ctx := testCtx(t, 60*time.Second)

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
						} else if we.Code == CodeLimited && limitData(t, we).Kind == "rate" {
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
			if we == nil || we.Code != CodeLimited || limitData(t, we).Kind != "concurrency" {
				t.Fatalf("a third hold of alice on replica 2: %v, want CodeLimited (concurrency)", we)
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
			openURL := e.replica(&Limits{Rules: rules, Store: store, StoreTimeout: 20 * time.Second, FailOpen: true})
			opened := e.client(openURL, "bob")
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			we = call(t, ctx, closed, "echo")
			if we == nil || we.Code != CodeLimitsUnavailable || limitData(t, we).Kind != "store" {
				t.Errorf("a call with the store stopped, failing closed: %v, want CodeLimitsUnavailable", we)
			}
			if we := call(t, ctx, opened, "echo"); we != nil {
				t.Errorf("a call with the store stopped, failing open: %v", we)
			}
		})
	}
}
