package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	upClient    = "gateway-at-up"
	upSecret    = "up-secret-8d1f0c2b7e"
	loginClient = "gateway-login"
	loginSecret = "login-secret-3a9e5d71c4"
)

// signInEnv is a gateway behind its Guard with its sign-in pages, in
// front of "up", an MCP server (whoami) protected by its own
// authorization server (upAS) whose users sign in through the gateway.
// The gateway's own authorization server (gwAS) issues the clients'
// tokens and signs the browsers in at the pages.
type signInEnv struct {
	gwAS, upAS *testauth.Server
	url, base  string // the MCP endpoint; the pages' base URL
	logs       *lockedBuffer
	gw         *gateway.Gateway

	askedMu sync.Mutex
	asked   map[*mcp.ClientSession]*mcp.ElicitParams // by sdkClient's sessions
}

// signInGateway starts a gateway on ln for the servers, with the sign-in
// pages at base, trusting gwAS.
func signInGateway(t *testing.T, ln net.Listener, base string, gwAS *testauth.Server, servers []gateway.Server, key []byte, store mcpadapter.TokenStore, logs *lockedBuffer, more ...func(*gateway.Options)) *gateway.Gateway {
	t.Helper()
	mcpURL := base + "/mcp"
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	guard, err := resourceserver.New(&resourceserver.Options{Resource: mcpURL, Issuers: []string{gwAS.URL},
		Scopes: []string{testauth.BaseScope}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	opts := &gateway.Options{Logger: log, AuditLog: log, Prefix: mcpadapter.PrefixAlways,
		SignIn: &gateway.SignInOptions{URL: base, Key: key, Store: store, Login: &gateway.SignInLogin{
			Issuer: gwAS.URL, ClientID: loginClient, ClientSecret: loginSecret, Resource: mcpURL,
			Scopes: []string{testauth.BaseScope}, Verify: guard.Principal}}}
	for _, f := range more {
		f(opts)
	}
	gw, err := gateway.New(servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/oauth/", gw.SignInHandler())
	mux.Handle("/", guard.Handler(gw))
	hs := httptest.NewUnstartedServer(mux)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return gw
}

func listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String()
}

func startSignIn(t *testing.T) *signInEnv {
	t.Helper()
	ln, base := listen(t)
	e := &signInEnv{url: base + "/mcp", base: base, logs: &lockedBuffer{}}
	e.gwAS = startGatewayAS(t, e.url)
	e.upAS = startUpAS(t)
	servers := []gateway.Server{{Name: "up", Config: &mcpadapter.ServerConfig{Name: "up", URL: e.upAS.MCPURL, Transport: "http",
		Auth: &mcpadapter.ServerAuth{Grant: &mcpadapter.GrantSettings{Type: "signin", Issuer: e.upAS.URL, ClientID: upClient,
			ClientSecret: upSecret, Scopes: []string{testauth.BaseScope}}}}}}
	e.gw = signInGateway(t, ln, base, e.gwAS, servers, []byte("0123456789abcdef0123456789abcdef"), nil, e.logs)
	return e
}

// startGatewayAS starts the gateway's own authorization server, for the
// gateway at mcpURL: its tokens name the user who signed in.
func startGatewayAS(t *testing.T, mcpURL string) *testauth.Server {
	return testauth.Start(t, testauth.Options{JWT: true, UserSubject: true, ClientID: loginClient, ClientSecret: loginSecret,
		NoRegistration: true, Resource: mcpURL})
}

// startUpAS starts the upstream server (whoami) behind its own
// authorization server, where the gateway is a client.
func startUpAS(t *testing.T) *testauth.Server {
	return testauth.Start(t, testauth.Options{MCP: whoami(), ClientID: upClient, ClientSecret: upSecret, NoRegistration: true})
}

// token returns an access token of the gateway for user.
func (e *signInEnv) token(t *testing.T, user string) string {
	t.Helper()
	tok, err := e.gwAS.SignToken(map[string]any{"sub": user, "aud": e.url, "scope": testauth.BaseScope, "client_id": "app"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// browser is a user's web browser: it keeps cookies, follows redirects,
// and is signed in as user at every authorization server it visits.
type browser struct {
	user string
	hc   *http.Client
}

type userTransport struct{ user string }

func (u userTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(testauth.UserHeader, u.user)
	return http.DefaultTransport.RoundTrip(r)
}

func newBrowser(t *testing.T, user string) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{user: user, hc: &http.Client{Jar: jar, Transport: userTransport{user}, Timeout: 20 * time.Second}}
}

// open visits u, following redirects, and returns the last page's
// status and text.
func (b *browser) open(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := b.hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// until visits u, following redirects until the next one would go to a
// URL for which stop is true, and returns that URL (unvisited).
func (b *browser) until(t *testing.T, u string, stop func(*url.URL) bool) string {
	t.Helper()
	hc := *b.hc
	var at string
	hc.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		if stop(r.URL) {
			at = r.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if at == "" {
		t.Fatalf("no redirect stopped at, from %s (status %d)", u, resp.StatusCode)
	}
	return at
}

// signInURLError returns the URL of the -32042 error err, failing if it
// is not one.
func signInURLError(t *testing.T, err error) (string, string) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("want a -32042 URL elicitation required error, got %v", err)
	}
	var d struct {
		Elicitations []mcp.ElicitParams `json:"elicitations"`
	}
	if err := json.Unmarshal(we.Data, &d); err != nil || len(d.Elicitations) != 1 {
		t.Fatalf("want one elicitation in the data, got %s (%v)", we.Data, err)
	}
	el := d.Elicitations[0]
	if el.Mode != "url" || el.ElicitationID == "" || el.Message == "" {
		t.Fatalf("want a url elicitation with an id and a message, got %+v", el)
	}
	return el.URL, el.ElicitationID
}

// sdkClient connects a go-sdk client of the handshake era with tok that
// declares URL elicitation (and declines every question), or none.
func (e *signInEnv) sdkClient(t *testing.T, ctx context.Context, tok string, urlElicit bool) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if urlElicit {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			e.askedMu.Lock()
			if e.asked == nil {
				e.asked = make(map[*mcp.ClientSession]*mcp.ElicitParams)
			}
			e.asked[req.Session] = req.Params
			e.askedMu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: bearerTransport{tok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// askedLink calls up_whoami on cs, an sdkClient that declares URL
// elicitation (or a client that declares it and takes no
// elicitation/create), and returns the URL and the elicitation ID of the
// sign-in question it was asked mid-call (and declined), or of the -32042
// error it got.
func (e *signInEnv) askedLink(t *testing.T, ctx context.Context, cs *mcp.ClientSession) (string, string) {
	t.Helper()
	_, err := whoamiText(ctx, cs)
	if err == nil {
		t.Fatal("the call ran without a sign-in")
	}
	e.askedMu.Lock()
	q := e.asked[cs]
	delete(e.asked, cs)
	e.askedMu.Unlock()
	if q == nil {
		return signInURLError(t, err)
	}
	if q.Mode != "url" || q.ElicitationID == "" || q.Message == "" {
		t.Fatalf("want a url question with an id and a message, got %+v", q)
	}
	return q.URL, q.ElicitationID
}

// whoamiText calls up_whoami on cs and returns its text.
func whoamiText(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", errors.New("an error result")
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// userOfUp returns the user whose sign-in issued the token authz at the
// upstream, failing when the upstream never saw it.
func (e *signInEnv) userOfUp(t *testing.T, authz string) string {
	t.Helper()
	for _, r := range e.upAS.Requests() {
		if r.Authorization == authz && authz != "" {
			return r.User
		}
	}
	t.Fatalf("the server never saw %q", authz)
	return ""
}

// signIn makes b complete the sign-in of link and checks the last page.
func (b *browser) signIn(t *testing.T, link string) {
	t.Helper()
	status, text := b.open(t, link)
	if status != http.StatusOK || !strings.Contains(text, "Signed in to up") {
		t.Fatalf("%s's sign-in ended with %d %q", b.user, status, text)
	}
}

// TestSignInThroughGateway: alice, a handshake-era go-sdk client that
// declares URL elicitation, is asked mid-call with the gateway's start
// page (and declines: TestSignInMidCall signs in at once);
// her browser signs in (at the gateway's authorization server, then at
// the server's) and her call runs with her own token. bob, mcpadapter's
// own Client (2026-07-28) in interrupt mode, gets the question as an
// interrupt (input_required) and never alice's token; a go-sdk client
// that declares no elicitation gets CodeSignInRequired with the URL in
// the data. Listings went with the gateway's own token.
func TestSignInThroughGateway(t *testing.T) {
	e := startSignIn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.sdkClient(t, ctx, e.token(t, "alice"), true)
	link, _ := e.askedLink(t, ctx, alice)
	if !strings.HasPrefix(link, e.base+"/oauth/start?t=") || strings.Contains(link, e.upAS.URL) || strings.Contains(link, "alice") {
		t.Fatalf("the question's URL should be the gateway's start page, naming nothing readable: %s", link)
	}
	newBrowser(t, "alice").signIn(t, link)
	got, err := whoamiText(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if u := e.userOfUp(t, got); u != "alice" {
		t.Fatalf("alice's call went with %q's token", u)
	}

	bob, err := mcpadapter.NewClient(e.url, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken(e.token(t, "bob"))})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	ad, err := mcpadapter.New(bob, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ad.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tools[0].Call(ctx, json.RawMessage(`{}`))
	var ir *mcpadapter.InputRequiredError
	if !errors.As(err, &ir) || len(ir.Pending.Requests) != 1 {
		t.Fatalf("bob's call: want one question, got %v", err)
	}
	q := ir.Pending.Requests[0]
	if q.Mode != "url" || !strings.HasPrefix(q.URL, e.base+"/oauth/start?t=") {
		t.Fatalf("bob's question: %+v", q)
	}
	if ir.Pending.RequestState != "mcpgw:sign-in" {
		t.Fatalf("bob's question should come as a 2026-07-28 input_required result, got a pending call with state %q", ir.Pending.RequestState)
	}

	// bob resumes before signing in: asked again; then he signs in, and
	// the resumed call runs with his own token.
	if _, err := tools[0].Resume(ctx, ir.Pending, &elicitation.Resume{Responses: map[string]elicitation.Response{q.Key: {Action: elicitation.Accept}}}); !errors.As(err, &ir) {
		t.Fatalf("bob resumed before signing in: want the question again, got %v", err)
	}
	newBrowser(t, "bob").signIn(t, ir.Pending.Requests[0].URL)
	res, err := tools[0].Resume(ctx, ir.Pending, &elicitation.Resume{Responses: map[string]elicitation.Response{q.Key: {Action: elicitation.Accept}}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("bob's resumed call: %v %+v", err, res)
	}
	bobTok := res.Text()
	if u := e.userOfUp(t, bobTok); u != "bob" || bobTok == got {
		t.Fatalf("bob's call went with %q's token", u)
	}
	if got2, err := whoamiText(ctx, alice); err != nil || got2 != got {
		t.Fatalf("alice's next call: %q %v (want her own token again)", got2, err)
	}

	plain := e.sdkClient(t, ctx, e.token(t, "carol"), false)
	_, err = whoamiText(ctx, plain)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != gateway.CodeSignInRequired || !strings.Contains(string(we.Data), e.base+"/oauth/start?t=") {
		t.Fatalf("a client without URL elicitation: want CodeSignInRequired with the URL in its data, got %v", err)
	}
	if strings.Contains(we.Message, "/oauth/start") {
		t.Fatalf("the URL belongs in the data, not the message (logged): %q", we.Message)
	}
	for _, r := range e.upAS.Requests() {
		if r.User != "" && r.User != "alice" && r.User != "bob" {
			t.Fatalf("the server got a request with %q's token", r.User)
		}
	}
	if n := e.upAS.Counts().ClientCredentials; n == 0 {
		t.Fatal("the listings went with no token of the gateway's own")
	}
	logs := e.logs.String()
	for _, s := range []string{upSecret, loginSecret, got[len("Bearer "):], bobTok[len("Bearer "):]} {
		if strings.Contains(logs, s) {
			t.Fatalf("the logs hold a secret or token: %q", s)
		}
	}
}

// TestExampleSignInConfig: the example config of the docs parses, and a
// gateway is made of it with sign-in pages; without them, or over stdio,
// it is refused with the reason.
func TestExampleSignInConfig(t *testing.T) {
	cfg := exampleConfig(t, "examples/signin.json")
	if g := cfg.Servers[0].Auth.Grant; g == nil || g.Type != "signin" || g.ClientSecret != "value-of-TRACKER_SECRET" {
		t.Fatalf("tracker's auth: %+v", g)
	}
	pages := &gateway.SignInOptions{URL: "https://gw.example.com", Key: make([]byte, 32),
		Authenticate: func(*http.Request) (string, error) { return "", nil }}
	gw, err := gateway.New(gateway.FromConfig(cfg), &gateway.Options{SignIn: pages})
	if err != nil {
		t.Fatal(err)
	}
	_ = gw.Close()
	if _, err := gateway.New(gateway.FromConfig(cfg), nil); err == nil || !strings.Contains(err.Error(), "Options.SignIn") {
		t.Errorf("a signin server with no sign-in pages: %v", err)
	}
	bad := &mcpadapter.ServerConfig{Name: "s", Command: "true", Transport: "stdio", Auth: cfg.Servers[0].Auth}
	if _, err := gateway.New([]gateway.Server{{Config: bad}}, &gateway.Options{SignIn: pages}); err == nil || !strings.Contains(err.Error(), "needs an HTTP server") {
		t.Errorf("a stdio server with signin: %v", err)
	}
	if _, err := gateway.New(gateway.FromConfig(cfg), &gateway.Options{SignIn: &gateway.SignInOptions{URL: "http://gw.example.com", Key: make([]byte, 32),
		Authenticate: pages.Authenticate}}); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("sign-in pages over http on a public host: %v", err)
	}
}
