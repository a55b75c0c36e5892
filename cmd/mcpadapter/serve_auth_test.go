package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestServeResourceServer: `serve --api-key --issuer` makes the gateway an
// OAuth resource server: it says what it accepts (naming no key), answers
// a request without a credential 401 with a challenge naming its
// metadata, and serves the CLI's own tools with an API key or a JWT of the
// issuer in the Authorization header, each principal seeing what
// --policy gives it.
func TestServeResourceServer(t *testing.T) {
	const key = "k-cli-0123456789abcdef"
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true})
	pol := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(pol, []byte(`{"rules":[{"principals":["ci"],"allow":["alpha/*"]},{"principals":["alice"],"allow":["alpha/echo"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, []string{"MCP_KEY_CI=" + key}, "--config", cfg, "--listen", "127.0.0.1:0", "--api-key", "ci=MCP_KEY_CI", "--issuer", as.URL, "--scope", testauth.BaseScope, "--policy", pol)
	url, out := p.URL, p.stdout.String()
	for _, want := range []string{"OAuth resource server", "API keys of ci", "JWTs of " + as.URL, "/.well-known/oauth-protected-resource/mcp"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve printed no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+p.stderr.String(), key) {
		t.Error("serve printed the API key")
	}

	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, "resource_metadata=") {
		t.Errorf("no credential: %d %q", resp.StatusCode, ch)
	}
	cli(t, "", "tools", "--header", "Authorization: Bearer "+key, url).Must(t, 0, []string{"echo", "add"}, nil)
	tok, err := as.SignToken(map[string]any{"sub": "alice", "aud": url, "scope": testauth.BaseScope})
	if err != nil {
		t.Fatal(err)
	}
	// alice's policy gives her echo only.
	r := cli(t, "", "tools", "--header", "Authorization: Bearer "+tok, url)
	r.Must(t, 0, []string{"echo"}, nil)
	if strings.Contains(r.Stdout, "add") {
		t.Errorf("alice sees a tool the policy does not give her:\n%s", r.Stdout)
	}
	other, _ := as.SignToken(map[string]any{"sub": "alice", "aud": "https://elsewhere.example/mcp", "scope": testauth.BaseScope})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+other)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a token for another audience: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestServeDPoPNonceKey: two `serve --dpop-nonce --dpop-nonce-key-env`
// replicas given the same key accept each other's nonces, so a DPoP
// client behind a round-robin proxy is not asked for a new nonce on every
// replica; a replica with its own random key refuses them.
func TestServeDPoPNonceKey(t *testing.T) {
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true})
	const resource = "http://127.0.0.1:1/mcp"
	t.Setenv("MCP_DPOP_NONCE_KEY", strings.Repeat("n", 32))
	replica := func(env string) *resourceserver.Guard {
		f := serveAuthFlags{issuers: []string{as.URL}, resource: resource, dpopNonce: true, dpopNonceEnv: env}
		g, err := f.guard(nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b, c := replica("MCP_DPOP_NONCE_KEY"), replica("MCP_DPOP_NONCE_KEY"), replica("")
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, _ := oauthflow.NewDPoP(key)
	tok, err := as.SignToken(map[string]any{"sub": "alice", "aud": resource, "cnf": map[string]any{"jkt": d.Thumbprint()}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(resource)
	request := func(nonce string) *http.Request {
		proof, err := d.Proof(http.MethodPost, u, tok, nonce)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, resource, nil)
		r.Header.Set("Authorization", "DPoP "+tok)
		r.Header.Set("DPoP", proof)
		return r
	}
	w := httptest.NewRecorder()
	a.Handler(http.NotFoundHandler()).ServeHTTP(w, request(""))
	nonce := w.Header().Get("DPoP-Nonce")
	if w.Code != http.StatusUnauthorized || nonce == "" {
		t.Fatalf("a proof without a nonce: %d, DPoP-Nonce %q", w.Code, nonce)
	}
	if _, err := b.Check(request(nonce)); err != nil {
		t.Errorf("a replica with the same key refused the nonce: %v", err)
	}
	if _, err := c.Check(request(nonce)); err == nil || !strings.Contains(err.Error(), "use_dpop_nonce") {
		t.Errorf("a replica with its own key: %v, want use_dpop_nonce", err)
	}
	f := serveAuthFlags{issuers: []string{as.URL}, resource: resource, dpopNonce: true, dpopNonceEnv: "MCP_DPOP_NONCE_UNSET"}
	if _, err := f.guard(nil, slog.Default()); err == nil {
		t.Error("--dpop-nonce-key-env naming an unset variable was accepted")
	}
}

// TestServeTokenExchange: a config entry with "auth" of type
// "token_exchange" makes `serve` exchange each principal's token for one
// for the server at the configured issuer: alice's call reaches the
// server as alice, with a token that is not hers, and the exchange's
// secret, read from the environment, is printed nowhere.
func TestServeTokenExchange(t *testing.T) {
	const secret = "xchg-secret-0123456789"
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true, ClientID: "gw", ClientSecret: secret,
		NoRegistration: true, NoPKCE: true, TokenExchange: true})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	doc := fmt.Sprintf(`{"mcpServers": {"up": {"url": %q, "auth": {"type": "token_exchange", "issuer": %q,
		"clientId": "gw", "clientSecret": "${XCHG_SECRET}", "scopes": [%q]}}}}`, as.MCPURL, as.URL, testauth.BaseScope)
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, []string{"XCHG_SECRET=" + secret}, "--config", cfg, "--listen", "127.0.0.1:0", "--issuer", as.URL, "--scope", testauth.BaseScope)
	tok, err := as.SignToken(map[string]any{"sub": "alice", "aud": p.URL, "scope": testauth.BaseScope})
	if err != nil {
		t.Fatal(err)
	}
	cli(t, "", "call", "--target", p.URL, "--header", "Authorization: Bearer "+tok, "echo", `{"text":"as alice"}`).Must(t, 0, []string{"as alice"}, nil)
	alice := requestsAs(t, as, tok, "alice")
	if alice == 0 || as.Counts().TokenExchanges != 1 {
		t.Errorf("%d requests as alice, %d exchanges; want some, and 1", alice, as.Counts().TokenExchanges)
	}
	if strings.Contains(p.stdout.String()+p.stderr.String(), secret) {
		t.Error("serve printed the exchange's secret")
	}
}

// TestServeIDJAG: a config entry's "token_exchange" auth with "grant":
// "id-jag" makes `serve` exchange each principal's token at the identity
// provider for an ID-JAG for the server's authorization server, and
// present it there: alice's call reaches the server as alice, with a token
// that authorization server issued, and neither secret, read from the
// environment, is printed.
func TestServeIDJAG(t *testing.T) {
	const idpSecret, asSecret = "idp-secret-0123456789", "as-secret-9876543210"
	gwAS := testauth.Start(t, testauth.Options{JWT: true, NoRegistration: true, NoPKCE: true})
	idp := testauth.StartIdP(t, "unused")
	idp.AcceptAccessTokens(gwAS)
	up := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "gw-at-up", ClientSecret: asSecret,
		NoRegistration: true, NoPKCE: true, AssertionKey: idp.PublicKey()})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	doc := fmt.Sprintf(`{"mcpServers": {"up": {"url": %q, "auth": {"type": "token_exchange", "grant": "id-jag", "issuer": %q,
		"clientId": "gw", "clientSecret": "${IDP_SECRET}", "authorizationServer": %q, "asClientId": "gw-at-up",
		"asClientSecret": "${AS_SECRET}", "scopes": [%q]}}}}`, up.MCPURL, idp.URL, up.URL, testauth.BaseScope)
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, []string{"IDP_SECRET=" + idpSecret, "AS_SECRET=" + asSecret}, "--config", cfg, "--listen", "127.0.0.1:0",
		"--issuer", gwAS.URL, "--scope", testauth.BaseScope)
	tok, err := gwAS.SignToken(map[string]any{"sub": "alice", "aud": p.URL, "scope": testauth.BaseScope})
	if err != nil {
		t.Fatal(err)
	}
	cli(t, "", "call", "--target", p.URL, "--header", "Authorization: Bearer "+tok, "echo", `{"text":"as alice"}`).Must(t, 0, []string{"as alice"}, nil)
	alice := requestsAs(t, up, tok, "alice")
	if alice == 0 || idp.Exchanges() != 1 || up.Counts().JWTBearer != 1 {
		t.Errorf("%d requests as alice, %d ID-JAGs, %d JWT bearer grants; want some, 1 and 1", alice, idp.Exchanges(), up.Counts().JWTBearer)
	}
	if out := p.stdout.String() + p.stderr.String(); strings.Contains(out, idpSecret) || strings.Contains(out, asSecret) {
		t.Error("serve printed a secret")
	}
}

// requestsAs counts the requests the MCP endpoint of srv took as user's;
// one that carried tok, the client's own token, fails t.
func requestsAs(t *testing.T, srv *testauth.Server, tok, user string) int {
	t.Helper()
	n := 0
	for _, r := range srv.Requests() {
		if strings.Contains(r.Authorization, tok) {
			t.Error("the client's own token reached the server")
		}
		if r.User == user {
			n++
		}
	}
	return n
}
