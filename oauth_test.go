package mcpadapter_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"golang.org/x/oauth2"
)

// browser plays the user: it follows an authorization URL to the
// authorization server, which redirects back to the client's loopback
// server.
type browser struct {
	mu     sync.Mutex
	opened []string
	delay  time.Duration // a slow user
}

func (b *browser) open(ctx context.Context, authURL string) error {
	b.mu.Lock()
	b.opened = append(b.opened, authURL)
	b.mu.Unlock()
	time.Sleep(b.delay)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func (b *browser) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.opened)
}

func oauthClient(t *testing.T, url string, o *mcpadapter.OAuth, logs io.Writer) *mcpadapter.Adapter {
	t.Helper()
	opts := mcpadapter.ClientOptions{Auth: o, ConnectTimeout: 10 * time.Second}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		opts.Trace = true
	}
	c, err := mcpadapter.NewClient(url, &opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestOAuthEndToEnd runs the whole flow against a loopback authorization
// server: discovery, dynamic registration, PKCE, the loopback redirect,
// a stored token reused and refreshed by a second client without the
// user, and a 403 insufficient_scope step-up.
func TestOAuthEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), AdminTool: "add"})
	user := &browser{}
	store := mcpadapter.NewMemoryTokenStore()
	var logs bytes.Buffer
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: store}, &logs)

	tools := toolMap(t, ctx, a)
	if got := mustCall(t, ctx, tools["echo"], `{"text":"signed in"}`).Text(); got != "signed in" {
		t.Errorf("echo: %q", got)
	}
	c := as.Counts()
	if user.count() != 1 || c.Registrations != 1 || c.Authorizations != 1 || c.CodeExchanges != 1 {
		t.Fatalf("first sign-in: user sent %d times, server counts %+v", user.count(), c)
	}
	st, err := store.Load(ctx, as.MCPURL)
	if err != nil || st == nil || st.Token.RefreshToken == "" || !slices.Contains(st.Scopes, testauth.BaseScope) {
		t.Fatalf("stored token %v, %v", st, err)
	}
	first := st.Token.AccessToken
	// The redirect URL was a loopback one with a PKCE challenge.
	if u := user.opened[0]; !strings.Contains(u, "code_challenge_method=S256") || !strings.Contains(u, "redirect_uri=http%3A%2F%2F127.0.0.1%3A") {
		t.Errorf("authorization URL %s", u)
	}

	// Step-up: add needs the admin scope; the server answers 403
	// insufficient_scope and the user is asked once more.
	if got := mustCall(t, ctx, tools["add"], `{"a":2,"b":3}`).Text(); !strings.Contains(got, "5") {
		t.Errorf("add after step-up: %q", got)
	}
	c = as.Counts()
	if c.StepUps != 1 || user.count() != 2 || c.CodeExchanges != 2 {
		t.Fatalf("step-up: user sent %d times, counts %+v", user.count(), c)
	}
	st, _ = store.Load(ctx, as.MCPURL)
	if !slices.Contains(st.Scopes, testauth.AdminScope) || !slices.Contains(st.Scopes, testauth.BaseScope) {
		t.Errorf("scopes after step-up: %q (want both)", st.Scopes)
	}

	// A second client with the same store: an expired stored token is
	// refreshed with no user in the loop, and the admin scope is kept.
	st.Token.Expiry = time.Now().Add(-time.Minute)
	if err := store.Save(ctx, as.MCPURL, st); err != nil {
		t.Fatal(err)
	}
	second := &browser{}
	b := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: second.open, Store: store}, &logs)
	tools2 := toolMap(t, ctx, b)
	if got := mustCall(t, ctx, tools2["add"], `{"a":1,"b":1}`).Text(); !strings.Contains(got, "2") {
		t.Errorf("add on the second client: %q", got)
	}
	if c := as.Counts(); second.count() != 0 || c.Refreshes != 1 {
		t.Errorf("second client: user sent %d times, counts %+v", second.count(), c)
	}

	// Every request that reached the MCP server carried a token; none of
	// the tokens were logged.
	st, _ = store.Load(ctx, as.MCPURL)
	for _, secret := range []string{first, st.Token.AccessToken, st.Token.RefreshToken} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a token appears in the logs")
		}
	}
	if !strings.Contains(logs.String(), "tools/list") {
		t.Errorf("the trace was not logged, so the check above proves nothing:\n%s", logs.String())
	}
}

func TestOAuthPreregisteredClient(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{
		MCP: testserver.New(testserver.Options{}), ClientID: "cli-app", ClientSecret: "s3cret", NoRegistration: true,
	})
	user := &browser{}
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{ClientID: "cli-app", ClientSecret: "s3cret", Issuer: as.URL, OpenURL: user.open}, nil)
	tools := toolMap(t, ctx, a)
	if got := mustCall(t, ctx, tools["echo"], `{"text":"x"}`).Text(); got != "x" {
		t.Errorf("echo: %q", got)
	}
	if c := as.Counts(); c.Registrations != 0 || c.CodeExchanges != 1 || user.count() != 1 {
		t.Errorf("counts %+v, user %d", c, user.count())
	}
}

// TestOAuthDenied: the user refuses; the error says so, is typed, and
// holds no secret.
func TestOAuthDenied(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), Deny: true})
	user := &browser{}
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open}, nil)
	_, err := a.Tools(ctx)
	var ae *mcpadapter.AuthorizationError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v (%T), want an *AuthorizationError", err, err)
	}
	if !strings.Contains(err.Error(), "access_denied") || !strings.Contains(err.Error(), "the user said no") {
		t.Errorf("error does not say why: %v", err)
	}
	if c := as.Counts(); c.CodeExchanges != 0 || c.MCPRequests != 0 || user.count() != 1 {
		t.Errorf("counts %+v; the user was sent %d times, want once", c, user.count())
	}
}

// TestOAuthSlowUser: the time a user takes to sign in does not count
// against ConnectTimeout; OAuth.Timeout bounds it instead.
func TestOAuthSlowUser(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	user := &browser{delay: 700 * time.Millisecond}
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{
		Auth:           &mcpadapter.OAuth{OpenURL: user.open},
		ConnectTimeout: 400 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatalf("a user slower than ConnectTimeout: %v", err)
	}

	// A user who never comes back: OAuth.Timeout, with a clear error.
	as2 := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	never := func(context.Context, string) error { return nil }
	c2, err := mcpadapter.NewClient(as2.MCPURL, &mcpadapter.ClientOptions{
		Auth: &mcpadapter.OAuth{OpenURL: never, Timeout: 300 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.ListTools(ctx)
	if err == nil || !strings.Contains(err.Error(), "did not finish signing in within 300ms") {
		t.Errorf("err = %v", err)
	}
}

// TestOAuthFileTokenStore: tokens survive the process (a new client and a
// new store on the same file), in a file only the user can read.
func TestOAuthFileTokenStore(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	path := filepath.Join(t.TempDir(), "sub", "tokens.json")
	user := &browser{}
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewFileTokenStore(path)}, nil)
	if _, err := a.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	b := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewFileTokenStore(path)}, nil)
	if _, err := b.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if user.count() != 1 {
		t.Errorf("the user signed in %d times, want 1", user.count())
	}

	// A corrupt file: the user signs in again, and the file is replaced.
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewFileTokenStore(path)}, nil)
	if _, err := c.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if user.count() != 2 {
		t.Errorf("after a corrupt file the user signed in %d times in all, want 2", user.count())
	}
	st, err := mcpadapter.NewFileTokenStore(path).Load(ctx, as.MCPURL)
	if err != nil || st == nil {
		t.Fatalf("after the corrupt file: %v, %v", st, err)
	}
	if old, err := os.ReadFile(path + ".corrupt"); err != nil || string(old) != "{not json" {
		t.Errorf("the corrupt file was not kept aside: %q, %v", old, err)
	}

	// Two stores on one file, saving at once, lose nothing.
	var wg sync.WaitGroup
	for i := range 2 {
		store := mcpadapter.NewFileTokenStore(path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				key := fmt.Sprintf("https://s%d-%d.example/mcp", i, j)
				if err := store.Save(ctx, key, &mcpadapter.StoredToken{Token: st.Token, TokenURL: "https://as.example/token"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for i := range 2 {
		for j := range 20 {
			if got, err := mcpadapter.NewFileTokenStore(path).Load(ctx, fmt.Sprintf("https://s%d-%d.example/mcp", i, j)); err != nil || got == nil {
				t.Errorf("token %d-%d lost: %v", i, j, err)
			}
		}
	}
	if s := st.String(); strings.Contains(s, st.Token.AccessToken) || strings.Contains(s, st.Token.RefreshToken) {
		t.Errorf("StoredToken.String shows a secret: %s", s)
	}
}

// TestOAuthFromConfig: "auth": "oauth" in a config, with the *OAuth in
// ClientOptions.Auth as the template; a server without auth gets none.
func TestOAuthFromConfig(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	open := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "open"}), testserver.Stateless())
	cfg, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {
		"secured": {"url": "` + as.MCPURL + `", "auth": "oauth"},
		"open": {"url": "` + open.URL + `"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	user := &browser{}
	g, err := mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{Auth: &mcpadapter.OAuth{OpenURL: user.open}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	if tools["secured_echo"] == nil || tools["open_echo"] == nil {
		t.Fatalf("tools %v", slices.Collect(maps.Keys(tools)))
	}
	if user.count() != 1 {
		t.Errorf("user sent %d times", user.count())
	}
	for _, r := range open.Requests() {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the server without auth got an Authorization header")
		}
	}

	// An auth object: a preregistered client from the config.
	as2 := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "from-config", NoRegistration: true})
	cfg, err = mcpadapter.ParseConfig([]byte(`{"mcpServers": {"s": {"url": "` + as2.MCPURL + `", "auth": {"type": "oauth", "clientId": "from-config", "scopes": ["mcp:tools"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	g2, err := mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{Auth: &mcpadapter.OAuth{OpenURL: user.open}})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if _, err := g2.Clients()[0].ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if c := as2.Counts(); c.Registrations != 0 || c.CodeExchanges != 1 {
		t.Errorf("counts %+v", c)
	}
}

// staticOAuth is an auth.OAuthHandler with a fixed token.
type staticOAuth string

func (s staticOAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: string(s), TokenType: "Bearer"}), nil
}

func (staticOAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	return errors.New("no")
}

// TestCredentialsStayOnOrigin: a server that redirects to another origin
// (here another port on the same host, which Go's own redirect rule
// treats as the same host) gets the request, but not the token, the
// OAuth token or the configured headers.
func TestCredentialsStayOnOrigin(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, state := testserver.NewWithState(testserver.Options{})
	other := testserver.StartStreamable(t, srv, testserver.Stateless())
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	for name, opts := range map[string]mcpadapter.ClientOptions{
		"bearer": {Auth: mcpadapter.BearerToken("sekrit"), Headers: map[string]string{"X-Api-Key": "k3y"}},
		"func": {Auth: mcpadapter.AuthFunc(func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Set("X-Signed", "sekrit")
				return next.RoundTrip(r)
			})
		})},
		"oauth": {OAuthHandler: staticOAuth("sekrit")},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := mcpadapter.NewClient(redirector.URL+"/mcp", &opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.CallTool(ctx, "headers", nil, nil); err != nil {
				t.Fatal(err)
			}
			h := state.LastHeaders("headers")
			for _, k := range []string{"Authorization", "X-Api-Key", "X-Signed"} {
				if v := h.Get(k); v != "" {
					t.Errorf("the other origin got %s: %q", k, v)
				}
			}
		})
	}
	// On the origin itself, all of them arrive.
	c, err := mcpadapter.NewClient(other.URL, &mcpadapter.ClientOptions{OAuthHandler: staticOAuth("sekrit"), Headers: map[string]string{"X-Api-Key": "k3y"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "headers", nil, nil); err != nil {
		t.Fatal(err)
	}
	if h := state.LastHeaders("headers"); h.Get("Authorization") != "Bearer sekrit" || h.Get("X-Api-Key") != "k3y" {
		t.Errorf("the origin got %v", h)
	}
	signed, err := mcpadapter.NewClient(other.URL, &mcpadapter.ClientOptions{Auth: mcpadapter.AuthFunc(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("X-Signed", "by-the-round-tripper")
			return next.RoundTrip(r)
		})
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer signed.Close()
	if _, err := signed.CallTool(ctx, "headers", nil, nil); err != nil {
		t.Fatal(err)
	}
	if h := state.LastHeaders("headers"); h.Get("X-Signed") != "by-the-round-tripper" {
		t.Errorf("the origin did not get the AuthFunc's header: %v", h)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestOAuthRedirectURL: a fixed loopback redirect is served; anything else
// is refused before the user is sent anywhere.
func TestOAuthRedirectURL(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	user := &browser{}
	redirect := fmt.Sprintf("http://localhost:%d/oauth/done", port)
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, RedirectURL: redirect}, nil)
	if _, err := a.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(user.opened[0], "redirect_uri="+url.QueryEscape(redirect)) {
		t.Errorf("authorization URL %s", user.opened[0])
	}

	for _, bad := range []string{"https://app.example.com/cb", "http://127.0.0.1/cb", "myapp://cb"} {
		_, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Auth: &mcpadapter.OAuth{OpenURL: user.open, RedirectURL: bad}})
		if err == nil || !strings.Contains(err.Error(), "want a loopback http URL with a port") {
			t.Errorf("RedirectURL %q: err = %v", bad, err)
		}
	}
	if user.count() != 1 {
		t.Errorf("the user was sent %d times, want 1", user.count())
	}
}

// TestOAuthCloseWhileSigningIn: Close ends a sign-in that is waiting for
// the user; nothing is left running.
func TestOAuthCloseWhileSigningIn(t *testing.T) {
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	base := runtime.NumGoroutine()
	opened := make(chan struct{}, 1)
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Auth: &mcpadapter.OAuth{
		OpenURL: func(context.Context, string) error { opened <- struct{}{}; return nil }, // the user never comes back
	}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.ListTools(ctx)
		errc <- err
	}()
	<-opened
	start := time.Now()
	c.Close()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "closed while connecting") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListTools still waiting 10s after Close")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v to end the sign-in", d)
	}
	testenv.WaitGoroutines(t, base)
}

// TestOAuthSSE: a legacy HTTP+SSE server behind OAuth, reached by a URL
// that does not say /sse: the streamable attempt signs in, finds a legacy
// server, and the SSE connection uses the same token; the user signs in
// once.
func TestOAuthSSE(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{Era: testserver.Legacy}), SSE: true})
	user := &browser{}
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open}, nil)
	tools := toolMap(t, ctx, a)
	if got := mustCall(t, ctx, tools["echo"], `{"text":"over sse"}`).Text(); got != "over sse" {
		t.Errorf("echo: %q", got)
	}
	info, err := a.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr := info.Servers[0].Transport; tr != "sse" {
		t.Errorf("transport %q, want sse", tr)
	}
	if c := as.Counts(); user.count() != 1 || c.CodeExchanges != 1 {
		t.Errorf("user sent %d times, counts %+v", user.count(), c)
	}
	for i, h := range as.AuthorizationHeaders() {
		if h == "" && i > 0 {
			t.Errorf("request %d after sign-in had no token", i)
		}
	}
}

// TestOAuthBadSettings: settings that cannot work fail in NewClient and
// NewGroup, before anything is sent.
func TestOAuthBadSettings(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]mcpadapter.ClientOptions{
		"secret without id":   {Auth: &mcpadapter.OAuth{ClientSecret: "s"}},
		"issuer without id":   {Auth: &mcpadapter.OAuth{Issuer: "https://a.example"}},
		"negative timeout":    {Auth: &mcpadapter.OAuth{Timeout: -time.Second}},
		"oauth and a handler": {Auth: &mcpadapter.OAuth{}, OAuthHandler: staticOAuth("x")},
		"nil oauth":           {Auth: (*mcpadapter.OAuth)(nil)},
	} {
		if _, err := mcpadapter.NewClient("https://mcp.example.com/mcp", &opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A redirect on port 0 can never be registered: refused, saying why,
	// through the API and in a config.
	_, err := mcpadapter.NewClient("https://mcp.example.com/mcp", &mcpadapter.ClientOptions{Auth: &mcpadapter.OAuth{RedirectURL: "http://127.0.0.1:0/callback"}})
	if err == nil || !strings.Contains(err.Error(), "port 0 cannot be registered") {
		t.Errorf("port 0: %v", err)
	}
	_, err = mcpadapter.ParseConfig([]byte(`{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "auth": {"type": "oauth", "redirectUrl": "http://localhost:0/cb"}}}}`))
	if err == nil || !strings.Contains(err.Error(), "mcpServers.s.auth.redirectUrl") || !strings.Contains(err.Error(), "port 0") {
		t.Errorf("port 0 in a config: %v", err)
	}
	cfg, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp", "auth": "oauth"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{Auth: &mcpadapter.OAuth{RedirectURL: "https://x.example/cb"}})
	var ce *mcpadapter.ConfigError
	if !errors.As(err, &ce) || ce.Path != "mcpServers.s.auth" {
		t.Errorf("err = %v, want a ConfigError at mcpServers.s.auth", err)
	}
}

// TestOAuthUserSlowerThanProbe: the sign-in starts inside the
// server/discover probe; a user slower than ProbeTimeout and
// ConnectTimeout still gets through.
func TestOAuthUserSlowerThanProbe(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	user := &browser{delay: 900 * time.Millisecond}
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{
		Auth:           &mcpadapter.OAuth{OpenURL: user.open},
		ProbeTimeout:   300 * time.Millisecond,
		ConnectTimeout: 400 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatalf("a user slower than ProbeTimeout: %v", err)
	}
	if info.ProtocolVersion != "2026-07-28" || user.count() != 1 {
		t.Errorf("version %s, user sent %d times", info.ProtocolVersion, user.count())
	}
}

// TestOAuthConcurrentSignIn: calls that all get 401 at once (the tokens
// were revoked) wait for one sign-in and share it.
func TestOAuthConcurrentSignIn(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	user := &browser{delay: 100 * time.Millisecond}
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open}, nil)
	echo := toolMap(t, ctx, a)["echo"]
	as.Revoke()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := echo.Call(ctx, []byte(fmt.Sprintf(`{"text":"call %d"}`, i)))
			switch {
			case err != nil:
				errs <- err
			case res.IsError || res.Text() != fmt.Sprintf("call %d", i):
				errs <- fmt.Errorf("call %d: %s", i, res.Text())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c := as.Counts(); user.count() != 2 || c.Registrations != 2 || c.CodeExchanges != 2 {
		t.Errorf("user sent %d times, counts %+v; want one sign-in after the revocation", user.count(), c)
	}
}

// TestOAuthGroupSharedRedirect: two servers of a group whose template has
// one fixed RedirectURL sign in one after the other, not into each
// other's port; the template's preregistered client is not used for them.
func TestOAuthGroupSharedRedirect(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as1 := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{Name: "one"})})
	as2 := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{Name: "two"})})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + l.Addr().String() + "/cb"
	l.Close()
	cfg, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {
		"one": {"url": "` + as1.MCPURL + `", "auth": "oauth"},
		"two": {"url": "` + as2.MCPURL + `", "auth": "oauth"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	user := &browser{delay: 200 * time.Millisecond}
	tmpl := &mcpadapter.OAuth{OpenURL: user.open, RedirectURL: redirect, ClientID: "template-client", ClientSecret: "template-secret"}
	g, err := mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{Auth: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	if tools["one_echo"] == nil || tools["two_echo"] == nil {
		t.Fatalf("tools %v", slices.Collect(maps.Keys(tools)))
	}
	for i, as := range []*testauth.Server{as1, as2} {
		if c := as.Counts(); c.Registrations != 1 || c.CodeExchanges != 1 {
			t.Errorf("server %d: counts %+v (want its own dynamic registration, not the template's client)", i+1, c)
		}
	}
}

// TestSharedCredentialsRefused: one bearer token for several HTTP servers
// of a config is refused; each server names its own.
func TestSharedCredentialsRefused(t *testing.T) {
	t.Parallel()
	cfg, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {
		"a": {"url": "https://a.example.com/mcp"},
		"b": {"url": "https://b.example.com/mcp"},
		"c": {"url": "https://c.example.com/mcp", "auth": "own-token"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken("t")})
	if err == nil || !strings.Contains(err.Error(), "one credential to 2 servers (a, b)") {
		t.Errorf("err = %v", err)
	}
	_, err = mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{OAuthHandler: staticOAuth("t")})
	if err == nil || !strings.Contains(err.Error(), "one credential to 3 servers") {
		t.Errorf("err = %v", err)
	}
	_, err = mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{Headers: map[string]string{"authorization": "Bearer t"}})
	if err == nil || !strings.Contains(err.Error(), "the Authorization header in ClientOptions.Headers would send one credential to 2 servers (a, b)") {
		t.Errorf("err = %v", err)
	}
	one, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {"a": {"url": "https://a.example.com/mcp"}, "c": {"url": "https://c.example.com/mcp", "auth": "own"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcpadapter.NewGroup(one, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken("t")}); err != nil {
		t.Errorf("one server without auth: %v", err)
	}
}

// TestOAuthDeadRefreshToken: a stored token whose refresh token the server
// no longer accepts makes the user sign in again, once.
func TestOAuthDeadRefreshToken(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	user := &browser{}
	store := mcpadapter.NewMemoryTokenStore()
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: store}, nil)
	if _, err := a.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := store.Load(ctx, as.MCPURL)
	st.Token.Expiry = time.Now().Add(-time.Minute)
	st.Token.RefreshToken = "revoked"
	if err := store.Save(ctx, as.MCPURL, st); err != nil {
		t.Fatal(err)
	}
	b := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: store}, nil)
	if _, err := b.Tools(ctx); err != nil {
		t.Fatalf("second client: %v (user sent %d times)", err, user.count())
	}
	if user.count() != 2 {
		t.Errorf("user sent %d times, want 2", user.count())
	}
}

// TestOAuthPlainForbidden: a 403 that does not ask for more scopes is the
// server's answer: it is reported at once, without a sign-in (here the
// fixed redirect port is even busy).
func TestOAuthPlainForbidden(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer srv.Close()
	user := &browser{}
	c, err := mcpadapter.NewClient(srv.URL+"/mcp", &mcpadapter.ClientOptions{
		Auth: &mcpadapter.OAuth{OpenURL: user.open, RedirectURL: "http://" + busy.Addr().String() + "/cb", Timeout: 3 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Connect(ctx)
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("err = %v, want the server's 403", err)
	}
	var ae *mcpadapter.AuthorizationError
	if errors.As(err, &ae) || user.count() != 0 {
		t.Errorf("a plain 403 started a sign-in: %v (user sent %d times)", err, user.count())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a plain 403 took %v", d)
	}
}
