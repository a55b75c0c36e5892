package mcpadapter_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The response cache tests count the requests each server saw.

const listTools = "tools/list"

// cachedClient returns a client of target with opts, closed at cleanup.
func cachedClient(t *testing.T, target any, opts mcpadapter.ClientOptions) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// listToolsN calls c.Tools n times with ctx.
func listToolsN(t *testing.T, ctx context.Context, c *mcpadapter.Client, n int) []*mcpadapter.Tool {
	t.Helper()
	var tools []*mcpadapter.Tool
	for range n {
		var err error
		if tools, err = c.Tools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return tools
}

func wantRequests(t *testing.T, st *testserver.State, method string, want int) {
	t.Helper()
	if got := st.Requests(method); got != want {
		t.Errorf("the server saw %d %s requests, want %d", got, method, want)
	}
}

func readText(t *testing.T, ctx context.Context, c *mcpadapter.Client, uri string) string {
	t.Helper()
	res, err := c.ReadResource(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0].Text
}

func TestCacheHitWithinTTL(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	first := listToolsN(t, ctx, c, 1)
	tools := listToolsN(t, ctx, c, 9)
	wantRequests(t, st, listTools, 1)
	if len(tools) != len(first) {
		t.Fatalf("%d tools from the cache, %d from the server", len(tools), len(first))
	}
	for i, tl := range tools {
		if tl.Name != first[i].Name || string(tl.InputSchema) != string(first[i].InputSchema) {
			t.Errorf("cached tool %d: %s %s, want %s %s", i, tl.Name, tl.InputSchema, first[i].Name, first[i].InputSchema)
		}
		if tl.Name == "schema" && string(tl.InputSchema) != testserver.SchemaInput {
			t.Errorf("cached schema not verbatim: %s", tl.InputSchema)
		}
	}
	// Results reach callers with the hint consumed, so go-sdk never
	// serves them from its own per-session cache.
	cs, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TTLMs != 0 {
		t.Errorf("ttlMs %d reached the caller", res.TTLMs)
	}
	wantRequests(t, st, listTools, 1)
}

func TestCacheMissAfterTTL(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 150})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	listToolsN(t, ctx, c, 2)
	wantRequests(t, st, listTools, 1)
	time.Sleep(200 * time.Millisecond)
	listToolsN(t, ctx, c, 2)
	wantRequests(t, st, listTools, 2)
}

func TestCacheMaxTTL(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{MaxTTL: 100 * time.Millisecond}})
	listToolsN(t, ctx, c, 2)
	time.Sleep(150 * time.Millisecond)
	listToolsN(t, ctx, c, 1)
	wantRequests(t, st, listTools, 2)
}

func TestCacheTTLZero(t *testing.T) {
	ctx := testCtx(t)
	for _, scope := range []string{"public", "private"} {
		t.Run(scope, func(t *testing.T) {
			srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 0, CacheScope: scope, Resources: true})
			// A DefaultTTL is for results without hints: ttlMs 0 is a hint.
			c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{DefaultTTL: time.Minute}})
			listToolsN(t, ctx, c, 3)
			wantRequests(t, st, listTools, 3)
			for i := 1; i <= 2; i++ {
				if got, want := readText(t, ctx, c, testserver.ResourceA), fmt.Sprintf("%s read %d", testserver.ResourceA, i); got != want {
					t.Errorf("read %q, want %q", got, want)
				}
			}
		})
	}
}

func TestCacheWithoutHints(t *testing.T) {
	ctx := testCtx(t)
	for _, tt := range []struct {
		ttl  time.Duration
		want int
	}{{0, 3}, {time.Minute, 1}} {
		t.Run(tt.ttl.String(), func(t *testing.T) {
			srv, st := testserver.NewWithState(testserver.Options{NoCacheHints: true})
			c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{DefaultTTL: tt.ttl}})
			listToolsN(t, ctx, c, 3)
			wantRequests(t, st, listTools, tt.want)
		})
	}
}

// TestCacheOffByDefault shows that without ClientOptions.Cache every
// listing reaches the server, although go-sdk alone would keep it.
func TestCacheOffByDefault(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, Resources: true})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{})
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != mcpadapter.EraDiscover {
		t.Fatalf("era %v", info.Era)
	}
	listToolsN(t, ctx, c, 3)
	readText(t, ctx, c, testserver.ResourceA)
	readText(t, ctx, c, testserver.ResourceA)
	wantRequests(t, st, listTools, 3)
	if n := st.Reads(testserver.ResourceA); n != 2 {
		t.Errorf("%d reads reached the server, want 2", n)
	}

	// The control: a bare go-sdk client of the same server caches.
	ct, sst := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, sst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 3 {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	wantRequests(t, st, listTools, 4)
}

// TestCachePrivatePublic runs three clients with one shared store against
// a stateless HTTP server that checks bearer tokens: alice, bob, and alice
// again.
func TestCachePrivatePublic(t *testing.T) {
	for _, tt := range []struct {
		scope                 string
		afterBob, afterAlice2 int
	}{
		{"public", 1, 1},
		{"private", 2, 2},
	} {
		t.Run(tt.scope, func(t *testing.T) {
			ctx := testCtx(t)
			srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, CacheScope: tt.scope})
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
			hs := httptest.NewServer(testserver.RequireBearer(h, "alice", "bob"))
			t.Cleanup(hs.Close) // after the clients' Close, which ends their streams
			store := mcpadapter.NewMemoryCacheStore(0)
			client := func(token string) *mcpadapter.Client {
				return cachedClient(t, hs.URL, mcpadapter.ClientOptions{
					Auth:  mcpadapter.BearerToken(token),
					Cache: &mcpadapter.CacheConfig{Store: store},
				})
			}
			alice, bob, alice2 := client("alice"), client("bob"), client("alice")

			listToolsN(t, ctx, alice, 2)
			info, err := alice.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Era != mcpadapter.EraDiscover {
				t.Fatalf("era %v", info.Era)
			}
			wantRequests(t, st, listTools, 1)
			wantRequests(t, st, "server/discover", 1)
			listToolsN(t, ctx, bob, 2)
			wantRequests(t, st, listTools, tt.afterBob)
			// server/discover is cached too, with the same scope.
			wantRequests(t, st, "server/discover", tt.afterBob)
			listToolsN(t, ctx, alice2, 2)
			wantRequests(t, st, listTools, tt.afterAlice2)
			wantRequests(t, st, "server/discover", tt.afterAlice2)

			// A client the server turns away is never served what others
			// were told, however it is cached.
			mallory := client("mallory")
			if _, err := mallory.Tools(ctx); err == nil && tt.scope == "private" {
				t.Error("an unauthorized client got the private tool list")
			}
		})
	}
}

func TestCacheInvalidatedOnListChanged(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	acked := make(chan struct{}, 1)
	changed := make(chan struct{}, 1)
	c := cachedClient(t, srv, mcpadapter.ClientOptions{
		Cache: &mcpadapter.CacheConfig{},
		MessageHandler: func(_ context.Context, method string, _ mcp.Request) {
			if method == "notifications/subscriptions/acknowledged" {
				select {
				case acked <- struct{}{}:
				default:
				}
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changed <- struct{}{}
		},
	})
	tools := listToolsN(t, ctx, c, 2)
	wantRequests(t, st, listTools, 1)
	select {
	case <-acked: // the server has the subscription: no notification is lost
	case <-ctx.Done():
		t.Fatal("no subscriptions/acknowledged")
	}

	srv.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case <-changed: // the cache was invalidated before the handler ran
	case <-ctx.Done():
		t.Fatal("no tools/list_changed")
	}
	after := listToolsN(t, ctx, c, 2)
	wantRequests(t, st, listTools, 2)
	if len(after) != len(tools)+1 {
		t.Errorf("%d tools after the change, want %d", len(after), len(tools)+1)
	}
}

func TestCacheRefreshAndBypass(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, Resources: true})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	bypass := mcpadapter.WithCacheMode(ctx, mcpadapter.CacheBypass)
	refresh := mcpadapter.WithCacheMode(ctx, mcpadapter.CacheRefresh)
	a := testserver.ResourceA
	steps := []struct {
		ctx  context.Context
		want int // the read whose text comes back
	}{
		{ctx, 1},
		{ctx, 1},
		{bypass, 2}, // asks the server ...
		{ctx, 1},    // ... and leaves the cache alone
		{refresh, 3},
		{ctx, 3},
		{mcpadapter.WithCacheMode(ctx, mcpadapter.CacheUse), 3},
	}
	for i, s := range steps {
		if got, want := readText(t, s.ctx, c, a), fmt.Sprintf("%s read %d", a, s.want); got != want {
			t.Errorf("step %d: %q, want %q", i, got, want)
		}
	}
	if n := st.Reads(a); n != 3 {
		t.Errorf("the server saw %d reads, want 3", n)
	}

	listToolsN(t, ctx, c, 1)
	listToolsN(t, bypass, c, 2)
	listToolsN(t, ctx, c, 1)
	listToolsN(t, refresh, c, 1)
	listToolsN(t, ctx, c, 1)
	wantRequests(t, st, listTools, 4)
}

func TestCacheInertOnLegacyServer(t *testing.T) {
	ctx := testCtx(t)
	// The legacy server sends hints anyway; a handshake-era connection's
	// results are never cached.
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy, CacheTTLMs: 60000, Resources: true})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{DefaultTTL: time.Minute}})
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != mcpadapter.EraHandshake {
		t.Fatalf("era %v", info.Era)
	}
	listToolsN(t, ctx, c, 3)
	wantRequests(t, st, listTools, 3)
	readText(t, ctx, c, testserver.ResourceA)
	readText(t, ctx, c, testserver.ResourceA)
	if n := st.Reads(testserver.ResourceA); n != 2 {
		t.Errorf("the server saw %d reads, want 2", n)
	}
}

func TestCacheOtherMethods(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, Resources: true})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	for range 3 {
		// Reads are keyed by URI.
		if got, want := readText(t, ctx, c, testserver.ResourceA), testserver.ResourceA+" read 1"; got != want {
			t.Errorf("read %q, want %q", got, want)
		}
		if got, want := readText(t, ctx, c, testserver.ResourceB), testserver.ResourceB+" read 1"; got != want {
			t.Errorf("read %q, want %q", got, want)
		}
		if rs, err := c.ListResources(ctx); err != nil || len(rs) != 2 {
			t.Fatalf("resources %v, %v", rs, err)
		}
		if ts, err := c.ListResourceTemplates(ctx); err != nil || len(ts) != 1 {
			t.Fatalf("templates %v, %v", ts, err)
		}
		if ps, err := c.ListPrompts(ctx); err != nil || len(ps) != 1 {
			t.Fatalf("prompts %v, %v", ps, err)
		}
		// Prompts themselves and tool calls are never cached.
		if _, err := c.GetPrompt(ctx, "greet", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(ctx, "echo", []byte(`{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
	}
	for m, want := range map[string]int{
		"resources/read": 2, "resources/list": 1, "resources/templates/list": 1, "prompts/list": 1,
		"prompts/get": 3, "tools/call": 3,
	} {
		wantRequests(t, st, m, want)
	}
}

func TestCacheDiscoverOnReconnect(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cache *mcpadapter.CacheConfig
		want  int
	}{{"off", nil, 3}, {"on", &mcpadapter.CacheConfig{}, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
			c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: tt.cache})
			for range 3 {
				info, err := c.Connect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if info.Era != mcpadapter.EraDiscover || info.Implementation == nil || info.Implementation.Name != testserver.DefaultName {
					t.Fatalf("info %+v", info)
				}
				if _, err := c.CallTool(ctx, "echo", []byte(`{"text":"x"}`)); err != nil {
					t.Fatal(err)
				}
				_ = c.Close()
			}
			wantRequests(t, st, "server/discover", tt.want)
		})
	}
}

func TestCacheCloneHasOwnStore(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	listToolsN(t, ctx, c, 2)
	a, err := mcpadapter.New(c, mcpadapter.WithElicitation(mcpadapter.ElicitInterrupt))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 2 {
		if _, err := a.Tools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The clone caches (one more request, not two), in a store of its own.
	wantRequests(t, st, listTools, 2)
}

func TestCacheGroupConfig(t *testing.T) {
	ctx := testCtx(t)
	var states []*testserver.State
	var urls []string
	for range 3 {
		srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
		states = append(states, st)
		urls = append(urls, testserver.ServeStreamable(t, srv, testserver.Stateless()))
	}
	cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers":{
		"on": {"url": %q, "cache": true},
		"tuned": {"url": %q, "cache": {"maxTtl": "1m", "maxEntries": 10}},
		"off": {"url": %q, "cache": false}}}`, urls[0], urls[1], urls[2])))
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 3 {
		if _, err := a.Tools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int{1, 1, 3} {
		if got := states[i].Requests(listTools); got != want {
			t.Errorf("server %d saw %d tools/list requests, want %d", i, got, want)
		}
	}
}

func TestCacheConcurrent(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, Resources: true})
	store := mcpadapter.NewMemoryCacheStore(4)
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{Store: store}})
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mode := mcpadapter.CacheMode(i % 3)
			cctx := mcpadapter.WithCacheMode(ctx, mode)
			for j := range 40 {
				if _, err := c.Tools(cctx); err != nil {
					errs <- err
					return
				}
				uri := fmt.Sprintf("test://cache/n%d", j%6) // more URIs than the store holds
				if _, err := c.ReadResource(cctx, uri); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for j := range 20 {
			name := fmt.Sprintf("churn_%d", j)
			srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, handler)
			time.Sleep(2 * time.Millisecond)
			srv.RemoveTools(name)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st.Requests(listTools) >= 8*40 {
		t.Errorf("%d tools/list requests: nothing was cached", st.Requests(listTools))
	}
}

func TestCacheInvalidatedOnResourceUpdated(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, Resources: true})
	acks := make(chan struct{}, 10)
	c := cachedClient(t, srv, mcpadapter.ClientOptions{
		Cache: &mcpadapter.CacheConfig{},
		MessageHandler: func(_ context.Context, method string, _ mcp.Request) {
			if method == "notifications/subscriptions/acknowledged" {
				acks <- struct{}{}
			}
		},
	})
	a, b := testserver.ResourceA, testserver.ResourceB
	readText(t, ctx, c, a)
	readText(t, ctx, c, b)
	cs, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: a}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the list notifications' subscription, and a's
		select {
		case <-acks:
		case <-ctx.Done():
			t.Fatal("no subscriptions/acknowledged")
		}
	}
	if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: a}); err != nil {
		t.Fatal(err)
	}
	// Served from the cache until the notification lands, then read anew.
	want := a + " read 2"
	for readText(t, ctx, c, a) != want {
		if ctx.Err() != nil {
			t.Fatal("the update never invalidated the cached read")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := st.Reads(a); n != 2 {
		t.Errorf("the server saw %d reads of %s, want 2", n, a)
	}
	if got := readText(t, ctx, c, b); got != b+" read 1" {
		t.Errorf("another resource's read was dropped: %q", got)
	}
}
