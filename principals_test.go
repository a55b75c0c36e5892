package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// perUserAuth signs each principal in to a testserver.ServePerUser server;
// a principal in refuse gets the error instead.
func perUserAuth(refuse map[string]error) mcpadapter.Auth {
	return mcpadapter.PrincipalToken(func(_ context.Context, p string) (string, error) {
		if err := refuse[p]; err != nil {
			return "", err
		}
		if p == "" {
			return testserver.PerUserToken("nobody"), nil
		}
		return testserver.PerUserToken(p), nil
	})
}

// as returns ctx made for principal p.
func as(ctx context.Context, p string) context.Context {
	return mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p})
}

// perUserClient returns a client of a per-user server of the given era.
func perUserClient(t *testing.T, stateless bool, opts *mcpadapter.ClientOptions) (*mcpadapter.Client, *testserver.PerUserServer) {
	t.Helper()
	srv := testserver.ServePerUser(t, testserver.PerUserOptions{Stateless: stateless})
	if opts == nil {
		opts = &mcpadapter.ClientOptions{}
	}
	if opts.Auth == nil {
		opts.Auth = perUserAuth(nil)
	}
	c, err := mcpadapter.NewClient(srv.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, srv
}

// perUserEras runs fn for a handshake-era server whose sessions belong to users
// and for a 2026-07-28 one.
func perUserEras(t *testing.T, fn func(t *testing.T, stateless bool)) {
	for _, e := range []struct {
		name      string
		stateless bool
	}{{"handshake", false}, {"2026-07-28", true}} {
		t.Run(e.name, func(t *testing.T) { fn(t, e.stateless) })
	}
}

// asCall calls tool as principal p and returns its text.
func asCall(ctx context.Context, c *mcpadapter.Client, p, tool string) (string, error) {
	res, err := c.CallTool(as(ctx, p), tool, nil, nil)
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", res.Text())
	}
	return res.Text(), nil
}

// TestPrincipalsGetTheirOwnSession: alice and bob call through one Client
// a server that ties each session to the user who opened it (go-sdk's
// auth.RequireBearerToken with TokenInfo.UserID): each is answered as
// themselves, and Connect shows each the instructions written for them.
func TestPrincipalsGetTheirOwnSession(t *testing.T) {
	perUserEras(t, func(t *testing.T, stateless bool) {
		c, srv := perUserClient(t, stateless, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for round := range 3 {
			for _, p := range []string{"alice", "bob", "carol"} {
				got, err := asCall(ctx, c, p, "whoami")
				if err != nil {
					t.Fatalf("round %d: %s: %v", round, p, err)
				}
				if got != p {
					t.Fatalf("round %d: whoami for %s answered %q", round, p, got)
				}
			}
		}
		for _, p := range []string{"alice", "bob"} {
			info, err := c.Connect(as(ctx, p))
			if err != nil {
				t.Fatal(err)
			}
			if want := "instructions for " + p; info.Instructions != want {
				t.Errorf("Connect for %s: instructions %q, want %q", p, info.Instructions, want)
			}
		}
		if !stateless {
			for _, p := range []string{"alice", "bob", "carol"} {
				if n := srv.Sessions(p); n != 1 {
					t.Errorf("%s opened %d sessions, want 1 (one per principal, kept)", p, n)
				}
			}
		}
		// Every request of a session (its event stream and the DELETE
		// that ends it included) carries one principal's token.
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		bySession := map[string]map[string]bool{}
		for _, r := range srv.HTTP.Requests() {
			if r.SessionID == "" {
				continue
			}
			if bySession[r.SessionID] == nil {
				bySession[r.SessionID] = map[string]bool{}
			}
			bySession[r.SessionID][r.Method+" "+r.Header.Get("Authorization")] = true
		}
		for id, seen := range bySession {
			tokens := map[string]bool{}
			for k := range seen {
				tokens[k[strings.IndexByte(k, ' ')+1:]] = true
			}
			if len(tokens) != 1 {
				t.Errorf("session %s got requests with %d tokens: %v", id, len(tokens), seen)
			}
		}
		if !stateless && len(bySession) != 3 {
			t.Errorf("%d sessions, want 3", len(bySession))
		}
	})
}

// TestPrincipalConnectFailureIsItsOwn: mallory's token source fails
// while her connect is under way and bob calls: bob's call succeeds, and
// mallory's error reaches only her.
func TestPrincipalConnectFailureIsItsOwn(t *testing.T) {
	perUserEras(t, func(t *testing.T, stateless bool) {
		entered := make(chan struct{})
		release := make(chan struct{})
		var once sync.Once
		auth := mcpadapter.PrincipalToken(func(ctx context.Context, p string) (string, error) {
			if p == "mallory" {
				once.Do(func() { close(entered) })
				select {
				case <-release:
				case <-ctx.Done():
				}
				return "", fmt.Errorf("account mallory@evil.example suspended for fraud, case #4411")
			}
			return testserver.PerUserToken(p), nil
		})
		c, _ := perUserClient(t, stateless, &mcpadapter.ClientOptions{Auth: auth})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		malloryErr := make(chan error, 1)
		go func() {
			_, err := asCall(ctx, c, "mallory", "whoami")
			malloryErr <- err
		}()
		<-entered
		bobDone := make(chan struct{})
		var (
			got string
			err error
		)
		go func() {
			defer close(bobDone)
			got, err = asCall(ctx, c, "bob", "whoami")
		}()
		time.Sleep(50 * time.Millisecond) // bob's call is under way
		close(release)
		<-bobDone
		switch {
		case err != nil && strings.Contains(err.Error(), "4411"):
			t.Errorf("bob's call got mallory's error: %v", err)
		case err != nil:
			t.Errorf("bob's call: %v", err)
		case got != "bob":
			t.Errorf("bob's call answered %q", got)
		}
		if err := <-malloryErr; err == nil || !strings.Contains(err.Error(), "4411") {
			t.Errorf("mallory's call: %v, want her token source's error", err)
		}
	})
}

// TestPrincipalsHandlersSeeTheCallsIdentity: the progress, log and
// elicitation of bob's calls reach the application with bob's identity,
// never alice's, though alice's call opened the connection; the answer to
// bob's question goes back with bob's credentials.
func TestPrincipalsHandlersSeeTheCallsIdentity(t *testing.T) {
	type seen struct{ kind, principal, text string }
	var (
		mu  sync.Mutex
		got []seen
	)
	record := func(ctx context.Context, kind, text string) {
		p := "<none>"
		if id := mcpadapter.CallIdentityFrom(ctx); id != nil {
			p = id.Principal
		}
		mu.Lock()
		got = append(got, seen{kind, p, text})
		mu.Unlock()
	}
	opts := &mcpadapter.ClientOptions{
		ProgressHandler: func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
			record(ctx, "progress", r.Params.Message)
		},
		LogHandler: func(ctx context.Context, r *mcp.LoggingMessageRequest) {
			record(ctx, "log", fmt.Sprint(r.Params.Data))
		},
		ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			record(ctx, "elicit", r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
	}
	c, _ := perUserClient(t, false, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range []string{"alice", "bob"} {
		sess, err := c.Session(as(ctx, p))
		if err != nil {
			t.Fatal(err)
		}
		//lint:ignore SA1019 logging lives in the handshake era, which this server speaks
		if err := sess.SetLoggingLevel(as(ctx, p), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"slow", "confirm"} {
			text, err := asCall(ctx, c, p, tool)
			if err != nil {
				t.Fatalf("%s %s: %v", p, tool, err)
			}
			if want := map[string]string{"slow": p, "confirm": p + " confirmed"}[tool]; text != want {
				t.Errorf("%s %s answered %q, want %q", p, tool, text, want)
			}
		}
	}
	// Notifications may trail their call's result.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	kinds := map[string]int{}
	for _, s := range got {
		kinds[s.kind]++
		owner := s.text[strings.LastIndexByte(s.text, ' ')+1:]
		owner = strings.TrimSuffix(owner, "?")
		if s.principal != owner {
			t.Errorf("%s %q reached the application as principal %q", s.kind, s.text, s.principal)
		}
	}
	for _, k := range []string{"progress", "log", "elicit"} {
		if kinds[k] != 2 {
			t.Errorf("%d %s messages, want 2 (one per principal): %v", kinds[k], k, got)
		}
	}
}

// checkOwnTools reports a tool list of principal p that holds anything of
// another principal: a tool named for another, or the query tool's
// schema listing another's database.
func checkOwnTools(p string, tools []*mcpadapter.Tool) error {
	var own, query bool
	for _, tool := range tools {
		switch {
		case tool.Name == p+"_private":
			own = true
		case strings.HasSuffix(tool.Name, "_private"):
			return fmt.Errorf("%s was shown %s (%q)", p, tool.Name, tool.Description)
		case tool.Name == "query":
			query = true
			if want := `"` + p + `-payroll-db"`; !strings.Contains(string(tool.InputSchema), want) {
				return fmt.Errorf("%s's query schema is %s", p, tool.InputSchema)
			}
		}
	}
	if !own || !query {
		return fmt.Errorf("%s's tools miss %s_private or query: %d tools", p, p, len(tools))
	}
	return nil
}

// TestPrincipalsSeeTheirOwnSchemas lists the tools of a server that shows
// each user their own databases, from many goroutines of three principals
// through one Client, with and without the response cache: each
// principal's list holds their own tools and schemas only.
func TestPrincipalsSeeTheirOwnSchemas(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", cached), func(t *testing.T) {
			perUserEras(t, func(t *testing.T, stateless bool) {
				srv := testserver.ServePerUser(t, testserver.PerUserOptions{Stateless: stateless, CacheTTLMs: 60000, CacheScope: "private"})
				opts := &mcpadapter.ClientOptions{Auth: perUserAuth(nil)}
				if cached {
					opts.Cache = &mcpadapter.CacheConfig{}
				}
				c, err := mcpadapter.NewClient(srv.URL, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				principals := []string{"alice", "bob", "carol"}
				var wg sync.WaitGroup
				errs := make(chan error, 64)
				for w := range 9 {
					wg.Go(func() {
						for i := range 15 {
							p := principals[(w+i)%len(principals)]
							tools, err := c.Tools(as(ctx, p))
							if err == nil {
								err = checkOwnTools(p, tools)
							}
							if err != nil {
								select {
								case errs <- err:
								default:
								}
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
			})
		})
	}
}

// TestPrincipalsSearchTheirOwnCatalog: through one Adapter with tool
// search, each principal's Search, search_tools and call_tool see their
// own catalog: never another's tools or schemas, and their own tool is
// never "removed by server" because another listed since.
func TestPrincipalsSearchTheirOwnCatalog(t *testing.T) {
	perUserEras(t, func(t *testing.T, stateless bool) {
		c, _ := perUserClient(t, stateless, nil)
		a, err := mcpadapter.New(c, &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for round := range 3 {
			pairs := map[string][]*mcpadapter.Tool{}
			for _, p := range []string{"alice", "bob"} {
				if pairs[p], err = a.Tools(as(ctx, p)); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{"alice", "bob"} {
				pctx := as(ctx, p)
				pair := pairs[p]
				hits, err := a.Search(pctx, "secret tool private databases query", 10)
				if err != nil {
					t.Fatal(err)
				}
				var found []*mcpadapter.Tool
				for _, h := range hits {
					found = append(found, h.Tool)
				}
				if err := checkOwnTools(p, found); err != nil {
					t.Errorf("round %d: Search: %v", round, err)
				}
				res, err := toolByName(t, pair, mcpadapter.SearchToolsName).Call(pctx, []byte(`{"query":"secret tool databases query","limit":10}`))
				if err != nil {
					t.Fatal(err)
				}
				other := map[string]string{"alice": "bob", "bob": "alice"}[p]
				if strings.Contains(res.Text(), other) {
					t.Errorf("round %d: search_tools for %s: %s", round, p, res.Text())
				}
				res, err = toolByName(t, pair, mcpadapter.CallToolName).Call(pctx, []byte(`{"name":"`+p+`_private","arguments":{}}`))
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || res.Text() != p+" private" {
					t.Errorf("round %d: call_tool %s_private for %s: %q", round, p, p, res.Text())
				}
			}
		}
	})
}

// TestPrincipalsListingWithoutScopeIsPrivate: a server that marks its
// per-user tool list cacheable with a TTL but no scope: with a
// CallIdentity in play, each principal's listing is cached for them alone.
func TestPrincipalsListingWithoutScopeIsPrivate(t *testing.T) {
	perUserEras(t, func(t *testing.T, stateless bool) {
		srv := testserver.ServePerUser(t, testserver.PerUserOptions{Stateless: stateless, CacheTTLMs: 60000, OmitCacheScope: true})
		c, err := mcpadapter.NewClient(srv.URL, &mcpadapter.ClientOptions{Auth: perUserAuth(nil), Cache: &mcpadapter.CacheConfig{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for round := range 2 {
			for _, p := range []string{"alice", "bob"} {
				tools, err := c.Tools(as(ctx, p))
				if err == nil {
					err = checkOwnTools(p, tools)
				}
				if err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			}
		}
	})
}

// TestPublicEntriesKeepTenantHeadersApart: a server that separates
// tenants by a header on one URL and marks its answers public: each
// tenant's read is served its own answer, from the cache too.
func TestPublicEntriesKeepTenantHeadersApart(t *testing.T) {
	srv := testserver.New(testserver.Options{CacheTTLMs: 60000, CacheScope: "public", WhoamiResource: true})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for round := range 2 {
		for _, tenant := range []string{"acme", "globex"} {
			tctx := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Headers: map[string]string{testserver.PrincipalHeader: tenant}})
			rr, err := c.ReadResource(tctx, testserver.ResourceWhoami)
			if err != nil {
				t.Fatal(err)
			}
			if got := rr.Contents[0].Text; !strings.HasPrefix(got, "whoami "+tenant+" read ") {
				t.Errorf("round %d: tenant %s read %q", round, tenant, got)
			}
		}
	}
}

// TestSharedConnectionHandlersSeeTheCallsIdentity: on a connection shared
// by every principal (an in-process server; stdio is alike), alice's call
// opens the connection, then bob's progress reaches the application with
// bob's identity, and a call for no one's with none.
func TestSharedConnectionHandlersSeeTheCallsIdentity(t *testing.T) {
	// Each call asks for another number of steps, so a notification's
	// total says which call it belongs to: a notification handled after
	// its call returned (go-sdk hands notifications over on their own)
	// is still judged against its own call's principal.
	var (
		mu  sync.Mutex
		got = map[float64][]string{} // principals seen, by the call's total
	)
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{
		ProgressHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			p := "<none>"
			if id := mcpadapter.CallIdentityFrom(ctx); id != nil {
				p = id.Principal
			}
			mu.Lock()
			got[req.Params.Total] = append(got[req.Params.Total], p)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := map[float64]string{2: "alice", 3: "bob", 4: "<none>"}
	for steps, p := range want {
		pctx := ctx
		if p != "<none>" {
			pctx = as(ctx, p)
		}
		if _, err := c.CallTool(pctx, "progress", json.RawMessage(fmt.Sprintf(`{"steps":%v}`, steps)), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The last notifications may be handled after their call returned.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(got[2]) + len(got[3]) + len(got[4])
		mu.Unlock()
		if n >= 2+3+4 {
			break
		}
		if time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for total, seen := range got {
		w, ok := want[total]
		if !ok {
			t.Errorf("a notification of no call (total %v): %v", total, seen)
			continue
		}
		for _, g := range seen {
			if g != w {
				t.Errorf("the progress of %q's call reached the application as %q's", w, g)
			}
		}
	}
	for total, w := range want {
		if len(got[total]) == 0 {
			t.Errorf("no progress for %q's call", w)
		}
	}
}

// TestPrincipalSessionsBounded: with MaxSessions 2, a third principal's
// connection closes the one unused longest (the server sees its session
// end, and the evicted principal connects anew when it calls again); when
// both connections have calls in flight, a third principal is refused
// with a TransportError that names the bound; idle connections close
// after SessionIdleTimeout.
func TestPrincipalSessionsBounded(t *testing.T) {
	block := make(chan struct{})
	asked := make(chan struct{}, 4)
	opts := &mcpadapter.ClientOptions{
		MaxSessions: 2,
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			select {
			case <-block:
			case <-ctx.Done():
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}
	c, srv := perUserClient(t, false, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range []string{"alice", "bob", "carol", "alice"} {
		if got, err := asCall(ctx, c, p, "whoami"); err != nil || got != p {
			t.Fatalf("%s: %q %v", p, got, err)
		}
	}
	if n := srv.Sessions("alice"); n != 2 {
		t.Errorf("alice opened %d sessions, want 2 (evicted by carol, then anew)", n)
	}
	// bob's and carol's connections, in that order of use: alice's
	// evicted bob's. Both now hold a call waiting for the user.
	var wg sync.WaitGroup
	for _, p := range []string{"alice", "carol"} {
		wg.Go(func() { _, _ = asCall(ctx, c, p, "confirm") })
		<-asked
	}
	_, err := asCall(ctx, c, "dave", "whoami")
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "MaxSessions") {
		t.Errorf("dave with both connections busy: %v, want a TransportError naming MaxSessions", err)
	}
	close(block)
	wg.Wait()
	if got, err := asCall(ctx, c, "dave", "whoami"); err != nil || got != "dave" {
		t.Errorf("dave once a connection is free: %q %v", got, err)
	}

	idle, isrv := perUserClient(t, false, &mcpadapter.ClientOptions{SessionIdleTimeout: 50 * time.Millisecond})
	for _, p := range []string{"alice", "bob"} {
		if _, err := asCall(ctx, idle, p, "whoami"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := asCall(ctx, idle, "carol", "whoami"); err != nil {
		t.Fatal(err)
	}
	if got, err := asCall(ctx, idle, "alice", "whoami"); err != nil || got != "alice" {
		t.Errorf("alice after her idle connection closed: %q %v", got, err)
	}
	if n := isrv.Sessions("alice"); n != 2 {
		t.Errorf("alice opened %d sessions, want 2 (the idle one closed, then anew)", n)
	}
}
