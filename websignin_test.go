package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// webApp is a web service's sign-in callback: it knows its user by
// appUserHeader (its own session, which the test's browser sends) and
// hands the callback to WebSignIn.Complete with that user.
type webApp struct {
	srv    *httptest.Server
	signIn atomic.Pointer[mcpadapter.WebSignIn]
}

const appUserHeader = "X-App-User"

func startWebApp(t testing.TB) *webApp {
	a := &webApp{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := r.Header.Get(appUserHeader)
		if r.URL.Path != "/callback" || user == "" {
			http.Error(w, "sign in to the app first", http.StatusUnauthorized)
			return
		}
		if err := a.signIn.Load().Complete(r.Context(), user, r.URL.Query()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "signed in")
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *webApp) redirectURL() string { return a.srv.URL + "/callback" }

// callback plays the browser of appUser coming back to the app at u.
func (a *webApp) callback(t testing.TB, u *url.URL, appUser string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(appUserHeader, appUser)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

var webStateKey = []byte("0123456789abcdef0123456789abcdef")

const webSecret = "web-client-secret"

// newWebSignIn returns the sign-in of the app for as's preregistered
// client "webapp".
func newWebSignIn(t testing.TB, as *testauth.Server, app *webApp, opts mcpadapter.WebSignInOptions) *mcpadapter.WebSignIn {
	t.Helper()
	if opts.Issuer == "" {
		opts.Issuer = as.URL
	}
	opts.ClientID, opts.ClientSecret, opts.RedirectURL = "webapp", webSecret, app.redirectURL()
	if opts.StateKey == nil {
		opts.StateKey = webStateKey
	}
	s, err := mcpadapter.NewWebSignIn(&opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	app.signIn.CompareAndSwap(nil, s)
	return s
}

func webClient(t testing.TB, url string, s *mcpadapter.WebSignIn) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Name: "notes", Auth: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// asUser returns ctx for principal p, who also names itself in a header the
// MCP endpoint records (to check whose token each request carried).
func asUser(ctx context.Context, p string) context.Context {
	return mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p, Headers: map[string]string{"X-Principal": p}})
}

// needSignIn calls a tool as p and returns the sign-in the call asks for.
func needSignIn(t testing.TB, ctx context.Context, c *mcpadapter.Client, p string) *mcpadapter.SignInRequiredError {
	t.Helper()
	_, err := c.CallTool(asUser(ctx, p), "headers", nil, nil)
	var sr *mcpadapter.SignInRequiredError
	if !errors.As(err, &sr) {
		t.Fatalf("%s's call before signing in: %v; want a *SignInRequiredError", p, err)
	}
	if sr.Principal != p || sr.Server != "notes" || !strings.HasPrefix(sr.URL, "http") {
		t.Fatalf("%s's sign-in: %+v", p, sr)
	}
	if strings.Contains(err.Error(), "state=") || strings.Contains(err.Error(), sr.URL) {
		t.Errorf("the error shows the sign-in URL: %v", err)
	}
	if strings.Contains(sr.URL, webSecret) {
		t.Errorf("the sign-in URL holds the client secret")
	}
	return sr
}

// signInAt plays p's browser: at the authorization server, then back to
// the app as p. It returns the callback URL.
func signInAt(t testing.TB, app *webApp, sr *mcpadapter.SignInRequiredError, p string) *url.URL {
	t.Helper()
	u, err := testauth.Authorize(sr.URL, p)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := app.callback(t, u, p); code != http.StatusOK {
		t.Fatalf("%s's callback: %d %s", p, code, body)
	}
	return u
}

// sentAuthorization calls the headers tool as p and returns the
// Authorization header the server saw.
func sentAuthorization(t testing.TB, ctx context.Context, c *mcpadapter.Client, p string) string {
	t.Helper()
	res, err := c.CallTool(asUser(ctx, p), "headers", nil, nil)
	if err != nil {
		t.Fatalf("%s's call: %v", p, err)
	}
	var h map[string][]string
	if err := json.Unmarshal([]byte(res.Text()), &h); err != nil {
		t.Fatal(err)
	}
	if len(h["Authorization"]) != 1 {
		t.Fatalf("%s's call carried Authorization %q", p, h["Authorization"])
	}
	return h["Authorization"][0]
}

// TestWebSignInPrincipals: two users sign in through the app's callback;
// every request of each carries that user's token (the authorization
// server says whose), under concurrency; a third user gets a sign-in URL
// of their own, and requests with no identity are no one's.
func TestWebSignInPrincipals(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	store := mcpadapter.NewMemoryTokenStore()
	s := newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{Store: store})
	c := webClient(t, as.MCPURL, s)

	for _, p := range []string{"alice", "bob"} {
		signInAt(t, app, needSignIn(t, ctx, c, p), p)
	}
	tokens := map[string]string{}
	for _, p := range []string{"alice", "bob"} {
		st, err := store.Load(ctx, mcpadapter.TokenKey(as.MCPURL, p))
		if err != nil || st == nil {
			t.Fatalf("%s's stored token: %v %v", p, st, err)
		}
		tokens[p] = "Bearer " + st.Token.AccessToken
		if got := sentAuthorization(t, ctx, c, p); got != tokens[p] {
			t.Errorf("%s's call was sent with another token than the one stored for them", p)
		}
	}
	if tokens["alice"] == tokens["bob"] {
		t.Fatal("alice and bob got one token")
	}
	if st, _ := store.Load(ctx, as.MCPURL); st != nil {
		t.Errorf("a token is stored for no one: %v", st)
	}

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := []string{"alice", "bob"}[i%2]
			for range 4 {
				if _, err := c.CallTool(asUser(ctx, p), "echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		}()
	}
	wg.Wait()

	carol := needSignIn(t, ctx, c, "carol")
	if q := mustQuery(t, carol.URL); q.Get("client_id") != "webapp" || q.Get("code_challenge_method") != "S256" ||
		q.Get("redirect_uri") != app.redirectURL() || q.Get("resource") != as.MCPURL || q.Get("state") == "" ||
		!slices.Contains(strings.Fields(q.Get("scope")), "offline_access") {
		t.Errorf("carol's sign-in URL: %s", carol.URL)
	}
	if _, err := c.CallTool(ctx, "headers", nil, nil); !errors.As(err, new(*mcpadapter.SignInRequiredError)) {
		t.Errorf("a call with no identity: %v; want a *SignInRequiredError (no one signed in for it)", err)
	}

	// Whose token each request carried, as the authorization server knows it.
	withToken := 0
	for _, r := range as.Requests() {
		if r.Authorization == "" {
			continue
		}
		withToken++
		if p := r.Header.Get("X-Principal"); r.User != p || r.Authorization != tokens[p] {
			t.Errorf("a request of %q carried a token of %q", p, r.User)
		}
	}
	if withToken < 2*8 {
		t.Errorf("only %d requests carried a token", withToken)
	}
	if c := as.Counts(); c.CodeExchanges != 2 || c.Registrations != 0 {
		t.Errorf("counts %+v: want 2 code exchanges", c)
	}
}

func mustQuery(t testing.TB, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// TestWebSignInHostileCallbacks: a callback completes only the sign-in
// it was made for, once, in time, by this service's key, and none of the
// refused ones reaches the token endpoint.
func TestWebSignInHostileCallbacks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	store := mcpadapter.NewMemoryTokenStore()
	s := newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{Store: store})
	c := webClient(t, as.MCPURL, s)

	refused := func(what string, u *url.URL, appUser, want string) {
		t.Helper()
		before := len(as.TokenRequests()) // refused or not
		code, body := app.callback(t, u, appUser)
		if code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d %q; want 400 saying %q", what, code, body, want)
		}
		if len(as.TokenRequests()) != before {
			t.Errorf("%s: the code was sent to the token endpoint", what)
		}
	}
	with := func(u *url.URL, set map[string]string) *url.URL {
		v := *u
		q := v.Query()
		for k, x := range set {
			q.Set(k, x)
		}
		v.RawQuery = q.Encode()
		return &v
	}

	// Alice's sign-in, brought back by bob's browser (a link mallory sent
	// him, or a session swap): it signs no one in.
	aliceURL, err := testauth.Authorize(needSignIn(t, ctx, c, "alice").URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	refused("alice's state as bob", aliceURL, "bob", "another user")
	if st, _ := store.Load(ctx, mcpadapter.TokenKey(as.MCPURL, "bob")); st != nil {
		t.Fatal("bob got alice's sign-in")
	}

	// Altered states, a state of another service's key, no state.
	state := aliceURL.Query().Get("state")
	flip := []byte(state)
	flip[len(flip)/2] ^= 1
	if flip[len(flip)/2] == '-' || flip[len(flip)/2] == '_' {
		flip[len(flip)/2] = 'A'
	}
	refused("an altered state", with(aliceURL, map[string]string{"state": string(flip)}), "alice", "not one this service made")
	refused("a cut state", with(aliceURL, map[string]string{"state": state[:len(state)-4]}), "alice", "not one this service made")
	refused("no state", with(aliceURL, map[string]string{"state": ""}), "alice", "no state")
	refused("a long state", with(aliceURL, map[string]string{"state": strings.Repeat("A", 5000)}), "alice", "too long")
	other := startWebApp(t)
	otherSignIn := newWebSignIn(t, as, other, mcpadapter.WebSignInOptions{StateKey: []byte("another key, 32 bytes long......")})
	otherURL, err := testauth.Authorize(needSignIn(t, ctx, webClient(t, as.MCPURL, otherSignIn), "alice").URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	otherURL.Host = aliceURL.Host // to this app's callback
	refused("a state sealed with another key", otherURL, "alice", "not one this service made")

	// The authorization server's refusal, an issuer that is not ours.
	refused("an error", with(aliceURL, map[string]string{"error": "access_denied", "error_description": "no\r\nway"}), "alice", "access_denied: noway")
	refused("another issuer", with(aliceURL, map[string]string{"iss": "https://evil.example"}), "alice", "not "+as.URL)

	// Alice's own callback works once; again, on this replica or another
	// that shares the store, it is refused.
	if code, body := app.callback(t, aliceURL, "alice"); code != http.StatusOK {
		t.Fatalf("alice's callback: %d %s", code, body)
	}
	refused("a replayed state", aliceURL, "alice", "already been completed")
	replica := startWebApp(t)
	newWebSignIn(t, as, replica, mcpadapter.WebSignInOptions{Store: store})
	refused("a replayed state on another replica", with(aliceURL, map[string]string{"code": "another-code"}), "alice", "already been completed")
	if _, err := c.CallTool(asUser(ctx, "alice"), "echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
		t.Fatal(err)
	}

	// An expired state.
	late := startWebApp(t)
	lateSignIn := newWebSignIn(t, as, late, mcpadapter.WebSignInOptions{StateTTL: time.Millisecond})
	lateURL, err := testauth.Authorize(needSignIn(t, ctx, webClient(t, as.MCPURL, lateSignIn), "dave").URL, "dave")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	before := as.Counts().CodeExchanges
	if code, body := late.callback(t, lateURL, "dave"); code != http.StatusBadRequest || !strings.Contains(body, "expired") {
		t.Errorf("an expired state: %d %q", code, body)
	}
	if as.Counts().CodeExchanges != before {
		t.Error("an expired state's code was exchanged")
	}
}

// TestWebSignInForeignIssuer: a server whose metadata names another
// authorization server than the issuer gets no sign-in: no URL, nothing
// sent to either authorization server.
func TestWebSignInForeignIssuer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	named := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret})
	ours := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret})
	app := startWebApp(t)
	s := newWebSignIn(t, named, app, mcpadapter.WebSignInOptions{Issuer: ours.URL})
	c := webClient(t, named.MCPURL, s)
	_, err := c.CallTool(asUser(ctx, "alice"), "headers", nil, nil)
	var ae *mcpadapter.AuthorizationError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "names the authorization server "+named.URL) {
		t.Fatalf("got %v; want an *AuthorizationError naming the foreign issuer", err)
	}
	if errors.As(err, new(*mcpadapter.SignInRequiredError)) {
		t.Error("a sign-in URL was made for a server naming another issuer")
	}
	for _, srv := range []*testauth.Server{named, ours} {
		if c := srv.Counts(); c.Authorizations+c.CodeExchanges+c.Refreshes+c.ClientCredentials != 0 || len(srv.TokenRequests()) != 0 {
			t.Errorf("%v: counts %+v", srv, c)
		}
	}
}

// TestWebSignInRedirectElsewhere: a server that redirects a signed-in
// user's request to another origin gets the request there without the
// token or the identity headers.
func TestWebSignInRedirectElsewhere(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	var mu sync.Mutex
	var evil []http.Header
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		evil = append(evil, r.Header.Clone())
		mu.Unlock()
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(elsewhere.Close)
	app := startWebApp(t)
	s := newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{})
	c := webClient(t, as.MCPURL, s)
	signInAt(t, app, needSignIn(t, ctx, c, "alice"), "alice")
	sentAuthorization(t, ctx, c, "alice")

	as.RedirectMCP(elsewhere.URL + "/mcp")
	if _, err := c.CallTool(asUser(ctx, "alice"), "echo", json.RawMessage(`{"text":"hi"}`), nil); err == nil {
		t.Error("the call through the redirect succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(evil) == 0 {
		t.Fatal("the redirect was not followed: the check below proves nothing")
	}
	for _, h := range evil {
		if h.Get("Authorization") != "" || h.Get("X-Principal") != "" {
			t.Errorf("the other origin got Authorization %q, X-Principal %q", h.Get("Authorization"), h.Get("X-Principal"))
		}
	}
}

// TestWebSignInSettings: settings that cannot work are refused, naming
// the setting.
func TestWebSignInSettings(t *testing.T) {
	ok := mcpadapter.WebSignInOptions{Issuer: "https://auth.example", ClientID: "app", RedirectURL: "https://app.example/cb", StateKey: webStateKey}
	for _, tc := range []struct {
		change func(*mcpadapter.WebSignInOptions)
		want   string
	}{
		{func(o *mcpadapter.WebSignInOptions) { o.Issuer = "" }, "Issuer is empty"},
		{func(o *mcpadapter.WebSignInOptions) { o.Issuer = "http://auth.example" }, "want https"},
		{func(o *mcpadapter.WebSignInOptions) { o.ClientID = "" }, "ClientID is empty"},
		{func(o *mcpadapter.WebSignInOptions) { o.RedirectURL = "" }, "RedirectURL is empty"},
		{func(o *mcpadapter.WebSignInOptions) { o.RedirectURL = "http://app.example/cb" }, "want https"},
		{func(o *mcpadapter.WebSignInOptions) { o.RedirectURL = "https://app.example/cb#x" }, "without a fragment"},
		{func(o *mcpadapter.WebSignInOptions) { o.StateKey = nil }, "StateKey is empty"},
		{func(o *mcpadapter.WebSignInOptions) { o.StateKey = []byte("short") }, "StateKey"},
		{func(o *mcpadapter.WebSignInOptions) { o.StateTTL = -time.Second }, "negative"},
	} {
		o := ok
		tc.change(&o)
		if _, err := mcpadapter.NewWebSignIn(&o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want an error saying %q", o, err, tc.want)
		}
	}
	if _, err := mcpadapter.NewWebSignIn(&ok); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpadapter.NewClient("https://mcp.example/mcp", &mcpadapter.ClientOptions{Auth: &mcpadapter.WebSignIn{}}); err == nil {
		t.Error("a WebSignIn not made by NewWebSignIn was taken")
	}
	var zero mcpadapter.WebSignIn
	if err := zero.Complete(context.Background(), "alice", url.Values{}); err == nil {
		t.Error("Complete on a zero WebSignIn succeeded")
	}
	zero.Close()
}

// TestTokenKey: the key of a principal's token is the server's URL for
// no one, and no two (server, principal) pairs share one.
func TestTokenKey(t *testing.T) {
	if got := mcpadapter.TokenKey("https://a.example/mcp", ""); got != "https://a.example/mcp" {
		t.Errorf("no principal: %q", got)
	}
	seen := map[string]string{}
	for _, r := range []string{"https://a.example/mcp", "https://a.example/mcp?principal=x", "https://a.example/mcp%0Aprincipal=x"} {
		for _, p := range []string{"", "x", "x\nprincipal=y", "principal=x", "%78"} {
			k := mcpadapter.TokenKey(r, p)
			pair := fmt.Sprintf("%q %q", r, p)
			if prev, ok := seen[k]; ok {
				t.Errorf("%s and %s share the key %q", prev, pair, k)
			}
			seen[k] = pair
		}
	}
}

// TestWebSignInErrorText: the error of a call that needs a sign-in says
// so (not only "the server refused authorization"), names the server and
// the principal, is an "auth" error, and holds no URL of the sign-in.
func TestWebSignInErrorText(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	c := webClient(t, as.MCPURL, newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{}))
	_, err := c.CallTool(asUser(ctx, "erin"), "headers", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `notes: principal "erin" must sign in`) || strings.Contains(err.Error(), "state=") {
		t.Errorf("error text: %v", err)
	}
	if got := mcpadapter.ErrorType(err); got != "auth" {
		t.Errorf("ErrorType %q; want auth", got)
	}
}

// TestWebSignInInterrupt: in ElicitInterrupt mode, a tool call whose
// user must sign in again (the server revoked every token) stops with a
// URL-mode question carrying the sign-in URL; the pending call survives
// JSON (another replica may resume it); after the callback, the resume
// makes the call with the new token. Another user cannot resume it.
func TestWebSignInInterrupt(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	c := webClient(t, as.MCPURL, newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{}))
	signInAt(t, app, needSignIn(t, ctx, c, "alice"), "alice")
	a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	alice := asUser(ctx, "alice")
	echo := toolMap(t, alice, a)["echo"]
	if _, err := echo.Call(alice, json.RawMessage(`{"text":"before"}`)); err != nil {
		t.Fatal(err)
	}

	as.Revoke()
	_, err = echo.Call(alice, json.RawMessage(`{"text":"after"}`))
	var ir *mcpadapter.InputRequiredError
	if !errors.As(err, &ir) || len(ir.Pending.Requests) != 1 {
		t.Fatalf("the call after the revocation: %v; want an *InputRequiredError with one question", err)
	}
	q := ir.Pending.Requests[0]
	if q.Key != mcpadapter.SignInKey || q.Mode != elicitation.ModeURL || mustQuery(t, q.URL).Get("state") == "" || ir.Pending.Principal != "alice" {
		t.Fatalf("the question: %+v, pending %+v", q, ir.Pending)
	}
	b, err := json.Marshal(ir.Pending)
	if err != nil {
		t.Fatal(err)
	}
	var pending mcpadapter.PendingCall
	if err := json.Unmarshal(b, &pending); err != nil {
		t.Fatal(err)
	}
	accept := &elicitation.Resume{Responses: map[string]elicitation.Response{mcpadapter.SignInKey: {Action: elicitation.Accept}}}
	if _, err := echo.Resume(asUser(ctx, "bob"), &pending, accept); !errors.As(err, new(*mcpadapter.ResumeDeniedError)) {
		t.Errorf("bob resumed alice's call: %v", err)
	}

	u, err := testauth.Authorize(q.URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := app.callback(t, u, "alice"); code != http.StatusOK {
		t.Fatalf("the callback: %d %s", code, body)
	}
	res, err := echo.Resume(alice, &pending, accept)
	if err != nil || res.Text() != "after" {
		t.Fatalf("the resumed call: %v, %v", res, err)
	}
	if c := as.Counts(); c.CodeExchanges != 2 {
		t.Errorf("counts %+v: want two sign-ins", c)
	}
}

// TestWebSignInStepUp: a tool that needs a scope the user's token lacks
// (403 insufficient_scope) asks for a sign-in with the scopes granted and
// the one missing; after it, the call runs.
func TestWebSignInStepUp(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret,
		NoRegistration: true, AdminTool: "add"})
	app := startWebApp(t)
	c := webClient(t, as.MCPURL, newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{}))
	signInAt(t, app, needSignIn(t, ctx, c, "alice"), "alice")
	add := json.RawMessage(`{"a":2,"b":3}`)
	_, err := c.CallTool(asUser(ctx, "alice"), "add", add, nil)
	var sr *mcpadapter.SignInRequiredError
	if !errors.As(err, &sr) {
		t.Fatalf("add without the admin scope: %v; want a *SignInRequiredError", err)
	}
	if scope := mustQuery(t, sr.URL).Get("scope"); !strings.Contains(scope, testauth.BaseScope) || !strings.Contains(scope, testauth.AdminScope) {
		t.Errorf("step-up asks for %q; want both scopes", scope)
	}
	signInAt(t, app, sr, "alice")
	res, err := c.CallTool(asUser(ctx, "alice"), "add", add, nil)
	if err != nil || !strings.Contains(res.Text(), "5") {
		t.Fatalf("add after the step-up: %v %v", res, err)
	}
}

// TestWebSignInSSE: the same sign-in and per-principal tokens over the
// legacy HTTP+SSE transport.
func TestWebSignInSSE(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret,
		NoRegistration: true, SSE: true})
	app := startWebApp(t)
	c := webClient(t, as.MCPURL, newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{}))
	for _, p := range []string{"alice", "bob"} {
		_, err := c.CallTool(asUser(ctx, p), "echo", json.RawMessage(`{"text":"hi"}`), nil)
		var sr *mcpadapter.SignInRequiredError
		if !errors.As(err, &sr) {
			t.Fatalf("%s before signing in: %v", p, err)
		}
		signInAt(t, app, sr, p)
		if res, err := c.CallTool(asUser(ctx, p), "echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil || res.Text() != "hi" {
			t.Fatalf("%s after signing in: %v %v", p, res, err)
		}
	}
	n := 0
	for _, r := range as.Requests() {
		if r.Authorization == "" {
			continue
		}
		n++
		if p := r.Header.Get("X-Principal"); r.User != p {
			t.Errorf("a request of %q carried a token of %q", p, r.User)
		}
	}
	if n == 0 {
		t.Error("no request carried a token")
	}
}

// TestWebSignInNothingLogged: with the protocol trace on and every log
// level, neither the tokens, the code, the client secret nor the sign-in
// URL's state reaches a log.
func TestWebSignInNothingLogged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store := mcpadapter.NewMemoryTokenStore()
	s := newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{Store: store, Logger: log})
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Name: "notes", Auth: s, Logger: log, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sr := needSignIn(t, ctx, c, "alice")
	back := signInAt(t, app, sr, "alice")
	sentAuthorization(t, ctx, c, "alice")
	st, err := store.Load(ctx, mcpadapter.TokenKey(as.MCPURL, "alice"))
	if err != nil || st == nil {
		t.Fatal(st, err)
	}
	out := logs.String()
	if !strings.Contains(out, "tools/call") || !strings.Contains(out, "signed in") {
		t.Fatalf("the trace or the sign-in was not logged, so the check below proves nothing:\n%s", out)
	}
	for what, secret := range map[string]string{
		"the access token": st.Token.AccessToken, "the refresh token": st.Token.RefreshToken, "the client secret": webSecret,
		"the code": back.Query().Get("code"), "the state": back.Query().Get("state"),
	} {
		if strings.Contains(out, secret) {
			t.Errorf("%s is in the logs", what)
		}
	}
	// The PKCE verifier went to the token endpoint only: the sign-in URL
	// carries it sealed in the state, never in clear.
	verifiers := 0
	for _, f := range as.TokenRequests() {
		if v := f.Get("code_verifier"); v != "" {
			verifiers++
			if strings.Contains(sr.URL, v) || strings.Contains(out, v) {
				t.Error("the PKCE verifier is in the sign-in URL or the logs")
			}
		}
	}
	if verifiers != 1 {
		t.Errorf("%d token requests with a code verifier; want 1", verifiers)
	}
}

// TestWebSignInAgainElsewhere: when a user's token is revoked and the
// user signs in again through another replica, this replica, which still
// holds the revoked token, takes the new one from the store at the
// server's 401 and sends the request again, asking nothing.
func TestWebSignInAgainElsewhere(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	store := mcpadapter.NewMemoryTokenStore()
	appA, appB := startWebApp(t), startWebApp(t)
	a := webClient(t, as.MCPURL, newWebSignIn(t, as, appA, mcpadapter.WebSignInOptions{Store: store}))
	b := webClient(t, as.MCPURL, newWebSignIn(t, as, appB, mcpadapter.WebSignInOptions{Store: store}))
	signInAt(t, appA, needSignIn(t, ctx, a, "alice"), "alice")
	old := sentAuthorization(t, ctx, a, "alice")

	as.Revoke()
	signInAt(t, appB, needSignIn(t, ctx, b, "alice"), "alice")
	if got := sentAuthorization(t, ctx, a, "alice"); got == old {
		t.Error("replica A sent the revoked token")
	}
	if c := as.Counts(); c.CodeExchanges != 2 {
		t.Errorf("counts %+v: want two sign-ins", c)
	}
}

// TestWebSignInDPoP: with a DPoP key, the tokens are issued bound to it and
// every request of the user goes as DPoP with a proof (the server's nonce
// included); a replica with the same key and store uses them; one with
// another key does not send them, and refreshes with its own proof.
func TestWebSignInDPoP(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret,
		NoRegistration: true, DPoP: true, DPoPNonce: "n-1"})
	key, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	store := mcpadapter.NewMemoryTokenStore()
	app := startWebApp(t)
	a := webClient(t, as.MCPURL, newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{Store: store, DPoPKey: key}))
	signInAt(t, app, needSignIn(t, ctx, a, "alice"), "alice")
	if got := sentAuthorization(t, ctx, a, "alice"); !strings.HasPrefix(got, "DPoP ") {
		t.Errorf("alice's request went as %q; want DPoP", strings.SplitN(got, " ", 2)[0])
	}
	b := webClient(t, as.MCPURL, newWebSignIn(t, as, startWebApp(t), mcpadapter.WebSignInOptions{Store: store, DPoPKey: key}))
	if got := sentAuthorization(t, ctx, b, "alice"); !strings.HasPrefix(got, "DPoP ") {
		t.Errorf("the replica sent alice's token as %q; want DPoP", strings.SplitN(got, " ", 2)[0])
	}
	other, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	// A replica with another key cannot send the token; a confidential
	// client refreshes it with its own key's proof.
	o := webClient(t, as.MCPURL, newWebSignIn(t, as, startWebApp(t), mcpadapter.WebSignInOptions{Store: store, DPoPKey: other}))
	if got := sentAuthorization(t, ctx, o, "alice"); !strings.HasPrefix(got, "DPoP ") {
		t.Errorf("the other key's replica sent alice's token as %q; want DPoP", strings.SplitN(got, " ", 2)[0])
	}
	if c := as.Counts(); c.DPoPTokens != 2 || c.CodeExchanges != 1 || c.Refreshes != 1 || c.NonceChallenges == 0 {
		t.Errorf("counts %+v: want one sign-in, one refresh, two DPoP tokens, nonces asked for", c)
	}
	for _, r := range as.Requests() {
		if r.Authorization != "" && !strings.HasPrefix(r.Authorization, "DPoP ") {
			t.Error("a request carried the bound token as a bearer token")
		}
	}
}

// TestWebSignInStateOfAnotherIssuer: a service with two WebSignIns, for
// two authorization servers, sealing their states with one key. A callback
// of the first's sign-in brought to the second's handler (a mix-up: an
// authorization server that does not name itself in its callbacks, a link
// mallory sends) is refused before the second sends the first's code and
// PKCE verifier to its own token endpoint.
func TestWebSignInStateOfAnotherIssuer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	first := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	second := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	firstApp, secondApp := startWebApp(t), startWebApp(t)
	firstSignIn := newWebSignIn(t, first, firstApp, mcpadapter.WebSignInOptions{})
	newWebSignIn(t, second, secondApp, mcpadapter.WebSignInOptions{}) // the same StateKey
	c := webClient(t, first.MCPURL, firstSignIn)

	u, err := testauth.Authorize(needSignIn(t, ctx, c, "alice").URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("code") == "" || u.Query().Get("iss") != "" {
		t.Fatalf("the first server's callback %s: want a code and no iss (the check below proves nothing)", u)
	}
	elsewhere := *u
	elsewhere.Host = mustParse(t, secondApp.redirectURL()).Host
	if code, body := secondApp.callback(t, &elsewhere, "alice"); code != http.StatusBadRequest || !strings.Contains(body, "not one this service made") {
		t.Errorf("the first server's callback at the second's handler: %d %q; want 400, a state not its own", code, body)
	}
	if reqs := second.TokenRequests(); len(reqs) != 0 {
		t.Errorf("the second authorization server got the first's code and verifier: %v", reqs)
	}
	// The callback still completes where it belongs.
	if code, body := firstApp.callback(t, u, "alice"); code != http.StatusOK {
		t.Fatalf("alice's callback: %d %s", code, body)
	}
	sentAuthorization(t, ctx, c, "alice")
}

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestWebSignInBothPaths: on the fast path and on go-sdk's, two signed-in
// users and a signed-out one call at once over the one Client: each
// request carries its own principal's token (the authorization server
// says whose), the signed-out user's none, and the calls took the path
// asked for.
func TestWebSignInBothPaths(t *testing.T) {
	t.Parallel()
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableFastPath=%v", disable), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
			app := startWebApp(t)
			store := mcpadapter.NewMemoryTokenStore()
			s := newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{Store: store})
			c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Name: "notes", Auth: s, DisableFastPath: disable})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			tokens := map[string]string{}
			for _, p := range []string{"alice", "bob"} {
				signInAt(t, app, needSignIn(t, ctx, c, p), p)
				st, err := store.Load(ctx, mcpadapter.TokenKey(as.MCPURL, p))
				if err != nil || st == nil {
					t.Fatalf("%s's stored token: %v %v", p, st, err)
				}
				tokens[p] = "Bearer " + st.Token.AccessToken
			}
			var wg sync.WaitGroup
			for i := range 9 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := []string{"alice", "bob", "carol"}[i%3]
					for range 4 {
						_, err := c.CallTool(asUser(ctx, p), "echo", json.RawMessage(`{"text":"hi"}`), nil)
						if signedIn := p != "carol"; signedIn && err != nil {
							t.Errorf("%s: %v", p, err)
						} else if !signedIn && !errors.As(err, new(*mcpadapter.SignInRequiredError)) {
							t.Errorf("carol, signed out: %v; want a *SignInRequiredError", err)
						}
					}
				}()
			}
			wg.Wait()
			paths := mcpadapter.CallPaths(c)
			if fast := paths[engine.PathFast] + paths[engine.PathHandedOver]; (fast > 0) != (!disable && mcpadapter.FastPathBuilt) || (disable && paths[engine.PathSDK] == 0) {
				t.Errorf("calls by path %v: want the fast path %v", paths, !disable)
			}
			seen := map[string]int{}
			for _, r := range as.Requests() {
				p := r.Header.Get("X-Principal")
				seen[p]++
				switch {
				case p == "carol" && r.Authorization != "":
					t.Errorf("a request of the signed-out carol carried a token of %q", r.User)
				case p != "carol" && r.Authorization != "" && (r.User != p || r.Authorization != tokens[p]):
					t.Errorf("a request of %q carried a token of %q", p, r.User)
				case p != "carol" && r.Authorization != "":
					seen[p+" signed in"]++
				}
			}
			if seen["alice signed in"] < 12 || seen["bob signed in"] < 12 || seen["carol"] == 0 {
				t.Errorf("requests by principal %v: want at least 12 each of alice's and bob's with a token, and carol's", seen)
			}
		})
	}
}

// TestWebSignInStateTooLong: a sign-in whose state would be longer than
// Complete takes (a principal of thousands of bytes) is refused when it
// would start, instead of sending the user on a sign-in that cannot end.
func TestWebSignInStateTooLong(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	c := webClient(t, as.MCPURL, newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{}))
	long := strings.Repeat("p", 4000)
	_, err := c.CallTool(mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: long}), "echo", json.RawMessage(`{"text":"hi"}`), nil)
	var sr *mcpadapter.SignInRequiredError
	if errors.As(err, &sr) {
		u, aerr := testauth.Authorize(sr.URL, "p")
		if aerr != nil {
			t.Fatal(aerr)
		}
		code, body := app.callback(t, u, long)
		t.Fatalf("a sign-in URL was made whose callback is refused (%d %q)", code, body)
	}
	var ae *mcpadapter.AuthorizationError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "too long") {
		t.Errorf("got %v; want an *AuthorizationError saying the sign-in's state is too long", err)
	}
	if c := as.Counts(); c.Authorizations != 0 {
		t.Errorf("counts %+v: want no authorization", c)
	}
}

// TestWebSignInInterruptNotYet: a call resumed with "accept" before the
// user signed in asks again (a new question, with a sign-in URL of its
// own), as the first call did: not an error of another kind.
func TestWebSignInInterruptNotYet(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	c := webClient(t, as.MCPURL, newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{}))
	a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	// The tools as bob, signed in, lists them.
	signInAt(t, app, needSignIn(t, ctx, c, "bob"), "bob")
	echo := toolMap(t, asUser(ctx, "bob"), a)["echo"]
	if echo == nil {
		t.Fatal("no echo tool")
	}
	alice := asUser(ctx, "alice")
	asked := func(what string, err error) *mcpadapter.InputRequiredError {
		t.Helper()
		var ir *mcpadapter.InputRequiredError
		if !errors.As(err, &ir) || len(ir.Pending.Requests) != 1 || ir.Pending.Requests[0].Key != mcpadapter.SignInKey {
			t.Fatalf("%s: %v; want an *InputRequiredError asking alice to sign in", what, err)
		}
		return ir
	}
	_, err = echo.Call(alice, json.RawMessage(`{"text":"hi"}`))
	first := asked("the first call", err)
	accept := &elicitation.Resume{Responses: map[string]elicitation.Response{mcpadapter.SignInKey: {Action: elicitation.Accept}}}
	_, err = echo.Resume(alice, first.Pending, accept)
	again := asked("resumed before the sign-in", err)
	if again.Pending.Requests[0].URL == first.Pending.Requests[0].URL {
		t.Error("the question asked again has the first one's URL")
	}
	signInAt(t, app, &mcpadapter.SignInRequiredError{URL: again.Pending.Requests[0].URL}, "alice")
	res, err := echo.Resume(alice, again.Pending, accept)
	if err != nil || res.Text() != "hi" {
		t.Fatalf("the call resumed after the sign-in: %v, %v", res, err)
	}
}
