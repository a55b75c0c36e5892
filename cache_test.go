package mcpadapter_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The response cache tests count the requests each server saw.

const listTools = "tools/list"

// cachedClient returns a client of target with opts, closed at cleanup.
func cachedClient(t *testing.T, target any, opts mcpadapter.ClientOptions) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(target, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// subscribedClient returns a caching client of srv and channels that
// receive when the server acknowledges the list_changed subscription and
// when notifications/tools/list_changed arrives.
func subscribedClient(t *testing.T, srv *mcp.Server) (c *mcpadapter.Client, acked, changed <-chan struct{}) {
	t.Helper()
	ack, change := make(chan struct{}, 1), make(chan struct{}, 1)
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	c = cachedClient(t, srv, mcpadapter.ClientOptions{
		Cache: &mcpadapter.CacheConfig{},
		MessageHandler: func(_ context.Context, method string, _ mcp.Request) {
			if method == "notifications/subscriptions/acknowledged" {
				signal(ack)
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { signal(change) },
	})
	return c, ack, change
}

// waitAck waits for the subscription's acknowledgement.
func waitAck(t *testing.T, ctx context.Context, acked <-chan struct{}) {
	t.Helper()
	select {
	case <-acked:
	case <-ctx.Done():
		t.Fatal("no subscriptions/acknowledged")
	}
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
	t.Parallel()
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
	t.Parallel()
	ctx := testCtx(t)
	// The entries are aged (agingStore), not waited for: a short TTL
	// could pass between two listings on a slow machine.
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	store := newAgingStore()
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{Store: store}})
	listToolsN(t, ctx, c, 2)
	wantRequests(t, st, listTools, 1)
	store.pass(59 * time.Second)
	listToolsN(t, ctx, c, 1)
	wantRequests(t, st, listTools, 1)
	store.pass(2 * time.Second)
	listToolsN(t, ctx, c, 2) // stale: asked again, then served fresh
	wantRequests(t, st, listTools, 2)
}

func TestCacheMaxTTL(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 3600000})
	store := newAgingStore()
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{MaxTTL: time.Minute, Store: store}})
	listToolsN(t, ctx, c, 2)
	wantRequests(t, st, listTools, 1)
	store.pass(61 * time.Second) // past MaxTTL, well within the server's hour
	listToolsN(t, ctx, c, 1)
	wantRequests(t, st, listTools, 2)
}

func TestCacheTTLZero(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
			info, err := alice.Connect(ctx)
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
			// server/discover is cached too (the server gives it the same
			// scope): a public one is shared, so bob's client connects
			// without sending anything.
			wantRequests(t, st, "server/discover", tt.afterBob)
			listToolsN(t, ctx, alice2, 2)
			wantRequests(t, st, listTools, tt.afterAlice2)
			wantRequests(t, st, "server/discover", tt.afterAlice2)

			// The server turns mallory away. A private result is never
			// served to her. A public one is, by definition, for any
			// caller: with the discover and tool list cached, her client
			// lists the tools without contacting the server, and the
			// refusal comes with her first real request.
			mallory := client("mallory")
			tools, err := mallory.Tools(ctx)
			switch tt.scope {
			case "private":
				if err == nil {
					t.Error("an unauthorized client got the private tool list")
				}
			case "public":
				if err != nil || len(tools) == 0 {
					t.Fatalf("the public tool list was not served from the cache: %d tools, %v", len(tools), err)
				}
				wantRequests(t, st, listTools, 1)
				wantRequests(t, st, "server/discover", 1)
				if _, err := mallory.CallTool(ctx, "echo", []byte(`{"text":"x"}`), nil); err == nil {
					t.Error("the server took a tool call from an unauthorized client")
				}
				if n := st.Calls("echo"); n != 0 {
					t.Errorf("the server ran echo %d times for an unauthorized client", n)
				}
			}
		})
	}
}

func TestCacheInvalidatedOnListChanged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	c, acked, changed := subscribedClient(t, srv)
	tools := listToolsN(t, ctx, c, 2)
	wantRequests(t, st, listTools, 1)
	waitAck(t, ctx, acked) // the server has the subscription: no notification is lost

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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
		if _, err := c.CallTool(ctx, "echo", []byte(`{"text":"x"}`), nil); err != nil {
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
	t.Parallel()
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
				if _, err := c.CallTool(ctx, "echo", []byte(`{"text":"x"}`), nil); err != nil {
					t.Fatal(err)
				}
				_ = c.Close()
			}
			wantRequests(t, st, "server/discover", tt.want)
		})
	}
}

// TestCacheDiscoverAfterLoss: a connection lost without Close drops the
// cached server/discover, so the reconnect talks to the server, whether the
// loss is noticed between requests or by a request that fails.
func TestCacheDiscoverAfterLoss(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	// drop ends the server's side of the session that calls it, and
	// answers only once the client gave up.
	srv.AddTool(&mcp.Tool{Name: "drop", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		go req.Session.Close()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	connect := func() {
		t.Helper()
		info, err := c.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Era != mcpadapter.EraDiscover {
			t.Fatalf("era %v", info.Era)
		}
	}
	connect()
	_ = c.Close()
	connect() // served from the cache
	wantRequests(t, st, "server/discover", 1)

	// Lost between requests.
	cs, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The go-sdk session ends under the Client (as when the transport
	// breaks). (Closing the server's side instead can hang: go-sdk's
	// ServerSession.Close waits for the open subscriptions/listen request.)
	_ = cs.Close()
	// The client learns of the loss a moment after go-sdk does: wait
	// (bounded) until it has a new session.
	newSession := func(old *mcp.ClientSession) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			next, err := c.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if next != old {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the client kept the lost session for 5s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	newSession(cs)
	connect()
	wantRequests(t, st, "server/discover", 2)
	listToolsN(t, ctx, c, 1)

	// Lost under a request.
	if cs, err = c.Session(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "drop", nil, nil); err == nil {
		t.Fatal("drop: no error")
	}
	newSession(cs)
	connect()
	wantRequests(t, st, "server/discover", 3)
	if _, err := c.CallTool(ctx, "echo", []byte(`{"text":"x"}`), nil); err != nil {
		t.Fatal(err)
	}
}

// TestCacheStaleAnswerAfterListChanged: a tools/list answer computed
// before a change, and received after the change's list_changed, is not
// cached.
func TestCacheStaleAnswerAfterListChanged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, _ := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	computed := make(chan struct{}, 1)
	release := make(chan struct{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == listTools {
				select {
				case computed <- struct{}{}: // the first answer is held back
					select {
					case <-release:
					case <-ctx.Done():
					}
				default:
				}
			}
			return res, err
		}
	})
	c, acked, changed := subscribedClient(t, srv)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	waitAck(t, ctx, acked)
	done := make(chan []*mcpadapter.Tool, 1)
	go func() {
		tools, err := c.Tools(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- tools
	}()
	select {
	case <-computed:
	case <-ctx.Done():
		t.Fatal("no tools/list")
	}
	srv.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed")
	}
	close(release)
	if old := <-done; hasTool(old, "late") {
		t.Fatal("the held-back answer already has the new tool: the test proves nothing")
	}
	tools := listToolsN(t, ctx, c, 1)
	if !hasTool(tools, "late") {
		t.Errorf("after list_changed the cache still serves the old list (%d tools, no \"late\")", len(tools))
	}
}

func hasTool(tools []*mcpadapter.Tool, name string) bool {
	for _, tl := range tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// recordingStore is a CacheStore that remembers the tools/list keys in
// the order they were first set, and the entries set.
type recordingStore struct {
	mcpadapter.CacheStore
	mu      sync.Mutex
	pages   []string
	entries map[string]mcpadapter.CacheEntry
}

func (s *recordingStore) Set(ctx context.Context, key string, e mcpadapter.CacheEntry) {
	s.mu.Lock()
	if s.entries == nil {
		s.entries = make(map[string]mcpadapter.CacheEntry)
	}
	if _, ok := s.entries[key]; !ok && strings.Contains(key, "\x00"+listTools+"\x00") {
		s.pages = append(s.pages, key)
	}
	s.entries[key] = e
	s.mu.Unlock()
	s.CacheStore.Set(ctx, key, e)
}

// page returns the key and the last entry set of tools/list page i.
func (s *recordingStore) page(t *testing.T, i int) (string, mcpadapter.CacheEntry) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.pages) {
		t.Fatalf("%d tools/list pages stored, want more than %d", len(s.pages), i)
	}
	return s.pages[i], s.entries[s.pages[i]]
}

// TestCacheListingPagesRedone: a cached first page whose cursor the
// server no longer takes (the next page was evicted) makes the listing
// start over from the server, once; and pages stored after a cached
// first page expire with it.
func TestCacheListingPagesRedone(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, _ := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, PageSize: 10, ManyTools: true})
	// The server's cursors name the generation they were made in and
	// expire with it, as a server with stateful cursors does.
	var mu sync.Mutex
	gen, lists, rejected := 1, 0, 0
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.ListToolsParams)
			if method != listTools || !ok {
				return next(ctx, method, req)
			}
			mu.Lock()
			lists++
			g := fmt.Sprintf("g%d:", gen)
			mu.Unlock()
			if p.Cursor != "" {
				if !strings.HasPrefix(p.Cursor, g) {
					mu.Lock()
					rejected++
					mu.Unlock()
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "expired cursor"}
				}
				p.Cursor = strings.TrimPrefix(p.Cursor, g)
			}
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok && err == nil && r.NextCursor != "" {
				r.NextCursor = g + r.NextCursor
			}
			return res, err
		}
	})
	counts := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return lists, rejected
	}
	store := &recordingStore{CacheStore: mcpadapter.NewMemoryCacheStore(0)}
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{Store: store}})
	names := func(tools []*mcpadapter.Tool) string {
		var b strings.Builder
		for _, tl := range tools {
			b.WriteString(tl.Name + " ")
		}
		return b.String()
	}
	first := listToolsN(t, ctx, c, 1)
	n, _ := counts()
	if n < 3 || len(first) <= 2*10 {
		t.Fatalf("%d tools in %d pages: the listing does not paginate", len(first), n)
	}
	pages := n

	// Page 2 evicted: page 1 from the cache, page 2 from the server,
	// stored to expire with page 1.
	key1, e1 := store.page(t, 0)
	key2, e2 := store.page(t, 1)
	if e2.Expires.After(e1.Expires) {
		t.Errorf("page 2 expires %v after page 1", e2.Expires.Sub(e1.Expires))
	}
	store.Delete(ctx, key2)
	time.Sleep(5 * time.Millisecond)
	if got := listToolsN(t, ctx, c, 1); names(got) != names(first) {
		t.Fatalf("after evicting page 2: %s, want %s", names(got), names(first))
	}
	if n, _ := counts(); n != pages+1 {
		t.Errorf("%d tools/list requests, want %d", n, pages+1)
	}
	if _, e := store.page(t, 1); !e.Expires.Equal(e1.Expires) {
		t.Errorf("page 2, stored after a cached page 1, expires %v after it", e.Expires.Sub(e1.Expires))
	}

	// The cursors expire and page 2 is evicted again: page 1's cached
	// cursor is refused, and the listing starts over from the server.
	mu.Lock()
	gen++
	mu.Unlock()
	store.Delete(ctx, key2)
	if got := listToolsN(t, ctx, c, 1); names(got) != names(first) {
		t.Fatalf("after the cursors expired: %s, want %s", names(got), names(first))
	}
	if n, r := counts(); n != 2*pages+2 || r != 1 {
		t.Errorf("%d tools/list requests (%d refused), want %d (1)", n, r, 2*pages+2)
	}
	if e, _ := store.Get(ctx, key1); !e.Expires.After(e1.Expires) {
		t.Error("page 1 was not refreshed")
	}
	// Everything is cached again, with the new cursors.
	if got := listToolsN(t, ctx, c, 2); names(got) != names(first) {
		t.Fatalf("%s, want %s", names(got), names(first))
	}
	if n, _ := counts(); n != 2*pages+2 {
		t.Errorf("%d tools/list requests, want %d", n, 2*pages+2)
	}
}

func TestCacheCloneHasOwnStore(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	listToolsN(t, ctx, c, 2)
	a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
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
	t.Parallel()
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
	a, err := mcpadapter.New(cfg, nil)
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

// TestCacheConcurrent lists and reads from many goroutines, in every mode,
// through a store too small for them, with pages, while the tool list
// churns: every answer must be whole and right, and once the churn stops
// the cache must converge on the server's list.
func TestCacheConcurrent(t *testing.T) {
	// Not parallel: a CPU-bound stress, alone in its time.
	testenv.SkipShort(t, "a concurrency stress of the cache")
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000, Resources: true, PageSize: 8})
	store := mcpadapter.NewMemoryCacheStore(4)
	c := cachedClient(t, srv, mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{Store: store}})
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	base := listToolsN(t, ctx, c, 1)
	pages := st.Requests(listTools)
	if pages < 2 {
		t.Fatalf("%d tools in %d pages: the listing does not paginate", len(base), pages)
	}
	// check says what is wrong with a tool list: every base tool once,
	// and no other tool than the churn's.
	check := func(tools []*mcpadapter.Tool) error {
		seen := make(map[string]bool)
		for _, tl := range tools {
			if seen[tl.Name] {
				return fmt.Errorf("tool %s listed twice", tl.Name)
			}
			seen[tl.Name] = true
		}
		for _, tl := range base {
			if !seen[tl.Name] {
				return fmt.Errorf("tool %s missing (%d tools)", tl.Name, len(tools))
			}
			delete(seen, tl.Name)
		}
		for name := range seen {
			if !strings.HasPrefix(name, "churn_") {
				return fmt.Errorf("unknown tool %s", name)
			}
		}
		return nil
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
				tools, err := c.Tools(cctx)
				if err == nil {
					err = check(tools)
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d (%v), list %d: %w", i, mode, j, err)
					return
				}
				uri := fmt.Sprintf("test://cache/n%d", j%6) // more URIs than the store holds
				res, err := c.ReadResource(cctx, uri)
				if err == nil && (len(res.Contents) != 1 || res.Contents[0].URI != uri || !strings.HasPrefix(res.Contents[0].Text, uri+" read ")) {
					err = fmt.Errorf("read %s: %+v", uri, res.Contents)
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d (%v), read %d: %w", i, mode, j, err)
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
	if n := st.Requests(listTools); n >= pages*(1+8*40) {
		t.Errorf("%d tools/list requests for %d listings of %d pages: nothing was cached", n, 1+8*40, pages)
	}
	// The last change's list_changed is on its way: the cached list must
	// become the server's, without waiting for its TTL.
	deadline := time.Now().Add(5 * time.Second)
	for {
		tools := listToolsN(t, ctx, c, 1)
		if check(tools) == nil && len(tools) == len(base) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache still serves a list of %d tools after the churn (the server has %d)", len(tools), len(base))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCacheInvalidatedOnResourceUpdated(t *testing.T) {
	t.Parallel()
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

func TestCacheConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  *mcpadapter.CacheConfig
		want string
	}{
		{nil, ""},
		{&mcpadapter.CacheConfig{}, ""},
		{&mcpadapter.CacheConfig{DefaultTTL: -time.Second}, "CacheConfig.DefaultTTL is negative (-1s)"},
		{&mcpadapter.CacheConfig{MaxTTL: -1}, "CacheConfig.MaxTTL is negative"},
		{&mcpadapter.CacheConfig{MaxEntries: -1}, "CacheConfig.MaxEntries is negative (-1)"},
	} {
		_, err := mcpadapter.NewClient("https://x.example/mcp", &mcpadapter.ClientOptions{Cache: tt.cfg})
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: error %v, want %q", tt.cfg, err, tt.want)
		}
	}
}
