package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	xchgClient = "gateway-client"
	xchgSecret = "gateway-secret-5f0c1e7a9b"
)

// whoami is an MCP server whose tool answers with the Authorization
// header its request came with: what the server was sent.
func whoami() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h := ""
			if ex := req.GetExtra(); ex != nil && ex.Header != nil {
				h = ex.Header.Get("Authorization")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: h}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "whoami"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		h := ""
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			h = ex.Header.Get("Authorization")
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: h}}}}, nil
	})
	return s
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// xchgEnv is a gateway behind its Guard in front of two servers: "up",
// protected by the authorization server as (testauth, which also issues
// the gateway's tokens and exchanges them), whose credential is exchanged
// per principal, and "plain", with no credential, which records the
// Authorization headers it gets.
type xchgEnv struct {
	as       *testauth.Server
	url      string
	logs     *lockedBuffer
	plainHdr *lockedBuffer
}

func startXchg(t *testing.T, asOpts func(*testauth.Options), extra func(*xchgEnv) []gateway.Server) *xchgEnv {
	t.Helper()
	return startXchgGuard(t, asOpts, extra, nil)
}

// startXchgGuard is startXchg with guardOpts, if not nil, changing the
// Guard's options.
func startXchgGuard(t *testing.T, asOpts func(*testauth.Options), extra func(*xchgEnv) []gateway.Server, guardOpts func(*resourceserver.Options)) *xchgEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &xchgEnv{url: "http://" + ln.Addr().String() + "/mcp", logs: &lockedBuffer{}, plainHdr: &lockedBuffer{}}
	ao := testauth.Options{MCP: whoami(), JWT: true, ClientID: xchgClient, ClientSecret: xchgSecret, NoRegistration: true,
		NoPKCE: true, TokenExchange: true, RefuseExchange: []string{"mallory"}}
	if asOpts != nil {
		asOpts(&ao)
	}
	e.as = testauth.Start(t, ao)
	plainSrv := testserver.New(testserver.Options{})
	plainH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return plainSrv }, nil)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(e.plainHdr, "%q\n", r.Header.Get("Authorization"))
		plainH.ServeHTTP(w, r)
	}))
	t.Cleanup(plain.Close)
	servers := []gateway.Server{
		{Name: "up", Config: &mcpadapter.ServerConfig{Name: "up", URL: e.as.MCPURL, Transport: "http", Auth: &mcpadapter.ServerAuth{Grant: &mcpadapter.GrantSettings{
			Type: "token_exchange", Issuer: e.as.URL, ClientID: xchgClient, ClientSecret: xchgSecret, Scopes: []string{testauth.BaseScope}}}}},
		{Name: "plain", Target: plain.URL},
	}
	if extra != nil {
		servers = append(servers, extra(e)...)
	}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gw, err := gateway.New(servers, &gateway.Options{Logger: log, AuditLog: log, Prefix: mcpadapter.PrefixAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	gopts := &resourceserver.Options{Resource: e.url, Issuers: []string{e.as.URL}, Scopes: []string{testauth.BaseScope}, Logger: log}
	if guardOpts != nil {
		guardOpts(gopts)
	}
	guard, err := resourceserver.New(gopts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(guard.Handler(gw))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return e
}

// token returns an access token of the authorization server for the
// gateway, for user.
func (e *xchgEnv) token(t *testing.T, user string) string {
	t.Helper()
	tok, err := e.as.SignToken(map[string]any{"sub": user, "aud": e.url, "scope": testauth.BaseScope, "client_id": "app"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bearerTransport sets Authorization on every request.
type bearerTransport struct{ tok string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// sdkClient connects a go-sdk client of the handshake era with tok.
func (e *xchgEnv) sdkClient(t *testing.T, ctx context.Context, tok string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: bearerTransport{tok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// ownClient returns mcpadapter's own Client of the gateway with tok.
func (e *xchgEnv) ownClient(t *testing.T, tok string) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(e.url, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken(tok)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// userOf returns the user whose exchanged token the authorization
// server's MCP endpoint saw as authz, failing when it saw none.
func (e *xchgEnv) userOf(t *testing.T, authz string) string {
	t.Helper()
	return mustUserAt(t, e.as, authz)
}

// mustUserAt is userAt, failing when the endpoint of as never saw authz.
func mustUserAt(t *testing.T, as *testauth.Server, authz string) string {
	t.Helper()
	if authz != "" {
		for _, r := range as.Requests() {
			if r.Authorization == authz {
				return r.User
			}
		}
	}
	t.Fatalf("the server never saw %q", authz)
	return ""
}

// TestExchangePerPrincipal: two principals at once, one with
// mcpadapter's own Client (2026-07-28), one with go-sdk's client
// (2025-11-25): each call reaches the server with a token exchanged for
// its own principal, made once per principal while it is valid; neither
// client's own token reaches any server; the server with no per-principal
// credential gets none.
func TestExchangePerPrincipal(t *testing.T) {
	e := startXchg(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice, bob := e.token(t, "alice"), e.token(t, "bob")
	own := e.ownClient(t, alice)
	sdk := e.sdkClient(t, ctx, bob)

	var wg sync.WaitGroup
	got := make([][]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				var text string
				if i == 0 {
					res, err := own.RelayCall(ctx, &mcp.CallToolParams{Name: "up_whoami"}, nil)
					if err != nil {
						errs[i] = err
						return
					}
					text = res.Content[0].(*mcp.TextContent).Text
				} else {
					res, err := sdk.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
					if err != nil {
						errs[i] = err
						return
					}
					text = res.Content[0].(*mcp.TextContent).Text
				}
				got[i] = append(got[i], text)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, user := range []string{"alice", "bob"} {
		for _, authz := range got[i] {
			if u := e.userOf(t, authz); u != user {
				t.Errorf("%s's call reached the server as %q", user, u)
			}
		}
	}
	if c := e.as.Counts().TokenExchanges; c != 2 {
		t.Errorf("%d token exchanges for 2 principals' 6 calls, want 2 (one each, cached)", c)
	}
	if res, err := sdk.CallTool(ctx, &mcp.CallToolParams{Name: "plain_echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Fatalf("plain_echo: %v %v", err, res)
	}
	for _, r := range e.as.Requests() {
		if strings.Contains(r.Authorization, alice) || strings.Contains(r.Authorization, bob) {
			t.Errorf("a client's own token reached the server: %q", r.Authorization)
		}
	}
	if h := e.plainHdr.String(); h == "" || strings.Trim(h, "\"\n") != "" {
		t.Errorf("the server with no credential got Authorization headers %q", h)
	}
	for _, s := range []string{alice, bob, xchgSecret} {
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("a secret is in the gateway's logs")
		}
	}
}

// TestExchangeRefused: a principal whose token the authorization server
// will not exchange gets a JSON-RPC error naming the server and the OAuth
// error, which quotes neither its token nor the gateway's secret; the
// server gets no request for it, and other principals go on.
func TestExchangeRefused(t *testing.T) {
	e := startXchg(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mallory := e.token(t, "mallory")
	cs := e.sdkClient(t, ctx, mallory)
	before := len(e.as.Requests())
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != gateway.CodeUpstreamAuth {
		t.Fatalf("err = %v, want a JSON-RPC error %d", err, gateway.CodeUpstreamAuth)
	}
	for _, want := range []string{`server "up"`, "invalid_grant", e.as.URL} {
		if !strings.Contains(rpc.Message, want) {
			t.Errorf("the error %q does not say %q", rpc.Message, want)
		}
	}
	for _, s := range []string{mallory, xchgSecret} {
		if strings.Contains(rpc.Message, s) || strings.Contains(e.logs.String(), s) {
			t.Errorf("a secret is in the error or the logs")
		}
	}
	if n := len(e.as.Requests()) - before; n != 0 {
		t.Errorf("the server got %d requests for a principal with no token", n)
	}
	res, err := e.sdkClient(t, ctx, e.token(t, "alice")).CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	if err != nil || e.userOf(t, res.Content[0].(*mcp.TextContent).Text) != "alice" {
		t.Fatalf("alice after mallory: %v", err)
	}
}

// TestExchangeExpiry: an exchanged token is used until shortly before it
// expires, then exchanged again.
func TestExchangeExpiry(t *testing.T) {
	e := startXchg(t, func(o *testauth.Options) { o.TokenTTL = 31 * time.Second }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := e.sdkClient(t, ctx, e.token(t, "alice"))
	var seen []string
	for i := range 3 {
		if i == 2 {
			time.Sleep(1200 * time.Millisecond) // past the expiry, less the margin
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i, err, res)
		}
		seen = append(seen, res.Content[0].(*mcp.TextContent).Text)
	}
	if seen[0] != seen[1] || seen[1] == seen[2] {
		t.Errorf("tokens %q: want the first reused, then a new one after expiry", seen)
	}
	if c := e.as.Counts().TokenExchanges; c != 2 {
		t.Errorf("%d exchanges, want 2", c)
	}
}

// TestExchangeHostileServer: a server that names another authorization
// server in its challenge and metadata gets nothing from the gateway's
// exchange, and that authorization server gets no request: the exchange
// goes to the configured issuer only.
func TestExchangeHostileServer(t *testing.T) {
	var evilHits lockedBuffer
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(&evilHits, "%s %s %q\n", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": "http://" + r.Host, "token_endpoint": "http://" + r.Host + "/token",
			"authorization_servers": []string{"http://" + r.Host}, "resource": "http://" + r.Host + "/mcp"})
	}))
	t.Cleanup(evil.Close)
	var hostileHdr lockedBuffer
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(&hostileHdr, "%q\n", r.Header.Get("Authorization"))
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+evil.URL+`/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(hostile.Close)
	e := startXchg(t, nil, func(e *xchgEnv) []gateway.Server {
		return []gateway.Server{{Name: "hostile", Target: hostile.URL,
			Exchange: &mcpadapter.TokenExchange{Issuer: e.as.URL, ClientID: xchgClient, ClientSecret: xchgSecret, Scopes: []string{testauth.BaseScope}}}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.token(t, "alice")
	cs := e.sdkClient(t, ctx, alice)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	// The gateway tried the hostile server (its listing, for no one).
	deadline := time.Now().Add(10 * time.Second)
	for hostileHdr.String() == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if hostileHdr.String() == "" {
		t.Fatal("the gateway never tried the hostile server")
	}
	if h := evilHits.String(); h != "" {
		t.Errorf("the authorization server the hostile server named was asked:\n%s", h)
	}
	for _, s := range []string{alice, xchgSecret} {
		if strings.Contains(hostileHdr.String(), s) {
			t.Errorf("the hostile server got a secret: %s", hostileHdr.String())
		}
	}
	for _, f := range e.as.TokenRequests() {
		if r := f.Get("resource"); r != hostile.URL && r != e.as.MCPURL {
			t.Errorf("a token asked for resource %q", r)
		}
	}
}

// TestExampleTokenExchangeConfig: the example config of the docs parses,
// and a gateway is made of it: its "crm" server's credential is
// exchanged per principal, its "docs" server has the one token.
func TestExampleTokenExchangeConfig(t *testing.T) {
	cfg := exampleConfig(t, "examples/token_exchange.json")
	g := cfg.Servers[0].Auth.Grant
	if cfg.Servers[0].Name != "crm" || g == nil || g.Type != "token_exchange" || g.ClientSecret != "value-of-GATEWAY_SECRET" ||
		g.Audience != "crm" || g.Resource != "https://crm.example.com/mcp" {
		t.Fatalf("crm's auth: %+v", g)
	}
	gw, err := gateway.New(gateway.FromConfig(cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = gw.Close()
	// Over stdio a credential per principal cannot be.
	bad := &mcpadapter.ServerConfig{Name: "s", Command: "true", Transport: "stdio", Auth: cfg.Servers[0].Auth}
	if _, err := gateway.New([]gateway.Server{{Config: bad}}, nil); err == nil || !strings.Contains(err.Error(), "needs an HTTP server") {
		t.Errorf("a stdio server with token_exchange: %v", err)
	}
}

// exampleConfig parses the example config at path, each environment
// variable it names standing for "value-of-" and its name.
func exampleConfig(t *testing.T, path string) *mcpadapter.Config {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpadapter.ParseConfigEnv(data, func(k string) (string, bool) { return "value-of-" + k, true })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestExampleIDJAGConfig: the example config of the docs parses, and a
// gateway is made of it, its "crm" server's credential by the ID-JAG flow.
func TestExampleIDJAGConfig(t *testing.T) {
	cfg := exampleConfig(t, "examples/id_jag.json")
	g := cfg.Servers[0].Auth.Grant
	if g == nil || g.Type != "token_exchange" || g.Grant != "id-jag" || g.AuthorizationServer != "https://auth.crm.example.com" ||
		g.ASClientID != "gateway-at-crm" || g.ASClientSecret != "value-of-CRM_AS_SECRET" || g.ClientSecret != "value-of-IDP_SECRET" {
		t.Fatalf("crm's auth: %+v", g)
	}
	gw, err := gateway.New(gateway.FromConfig(cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = gw.Close()
	// An authorization server the client may not send to is refused.
	bad := *cfg.Servers[0]
	ba := *bad.Auth
	bg := *g
	bg.AuthorizationServer = "http://auth.crm.example.com"
	ba.Grant, bad.Auth = &bg, &ba
	if _, err := gateway.New([]gateway.Server{{Config: &bad}}, nil); err == nil || !strings.Contains(err.Error(), "AuthorizationServer") {
		t.Errorf("an http authorization server: %v", err)
	}
}

// upstreamAuthError returns the message of err, failing t (saying what
// the request was) when err is not the JSON-RPC error CodeUpstreamAuth or
// its message does not say each of want.
func upstreamAuthError(t *testing.T, what string, err error, want ...string) string {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != gateway.CodeUpstreamAuth {
		t.Fatalf("%s: %v, want a JSON-RPC error %d", what, err, gateway.CodeUpstreamAuth)
	}
	for _, w := range want {
		if !strings.Contains(rpc.Message, w) {
			t.Errorf("%s: the error %q does not say %q", what, rpc.Message, w)
		}
	}
	return rpc.Message
}
