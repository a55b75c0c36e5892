package mcpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The tests in this file play a malicious MCP server whose protected
// resource metadata names a malicious authorization server; both record
// every request they receive (testauth.Evil). For every flow that holds a
// secret (a client secret, a private key, a workload token, a user's ID
// token, a file's content), through the API and through a config file,
// over both protocol versions, no secret reaches either.

// authEras are the two protocol versions a client connects with: the
// stateless 2026-07-28 (server/discover) and the 2025-11-25 handshake.
var authEras = []struct {
	name    string
	version string // ClientOptions.ProtocolVersion
	server  testserver.Era
	first   string // the JSON-RPC method of the first request
}{
	{"2026-07-28", "", testserver.Modern, "server/discover"},
	{"2025-11-25", "2025-11-25", testserver.Legacy, "initialize"},
}

// secrets is what a client holds and no malicious server may receive.
type secrets struct {
	clientSecret, idpSecret string
	workloadJWT, idToken    string
	keyPEM                  []byte
	fileContent             string // of an assertion file
}

func newSecrets(t *testing.T, legit *testauth.Server, idp *testauth.IdP) secrets {
	t.Helper()
	wl := newKey(t)
	jwt, err := oauthflow.SignJWT(wl, nil, map[string]any{"iss": "https://k8s.example", "sub": "system:serviceaccount:ci:job", "aud": legit.URL, "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	fileJWT, err := oauthflow.SignJWT(wl, nil, map[string]any{"iss": "https://k8s.example", "sub": "from-file", "aud": legit.URL, "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	return secrets{
		clientSecret: "REAL-CLIENT-SECRET-" + t.Name(),
		idpSecret:    "REAL-IDP-SECRET",
		workloadJWT:  jwt,
		idToken:      idp.IDToken(t, "alice@example.com"),
		keyPEM:       keyPEM(t, newKey(t)),
		fileContent:  fileJWT,
	}
}

// all returns every secret as text to look for.
func (s secrets) all() []string {
	out := []string{s.clientSecret, s.idpSecret, s.workloadJWT, s.idToken, s.fileContent}
	// A JWT's signature alone identifies it.
	for _, j := range []string{s.workloadJWT, s.idToken, s.fileContent} {
		out = append(out, j[strings.LastIndexByte(j, '.')+1:])
	}
	return out
}

// flows are the ways a client may hold credentials, each pinned to the
// legitimate issuer.
func flows(legit *testauth.Server, idp *testauth.IdP, s secrets, user *browser) map[string]mcpadapter.Auth {
	k, _ := mcpadapter.ParsePrivateKeyPEM(s.keyPEM)
	return map[string]mcpadapter.Auth{
		"client_credentials secret": &mcpadapter.ClientCredentials{Issuer: legit.URL, ClientID: "svc", ClientSecret: s.clientSecret},
		"client_credentials key":    &mcpadapter.ClientCredentials{Issuer: legit.URL, ClientID: "svc", PrivateKey: k},
		"jwt_bearer": &mcpadapter.JWTBearer{Issuer: legit.URL, ClientID: "workload",
			Assertion: func(context.Context) (string, error) { return s.workloadJWT, nil }},
		"enterprise": &mcpadapter.EnterpriseAuth{Issuer: legit.URL, ClientID: "mcp-app", ClientSecret: s.clientSecret,
			IDToken:     func(context.Context) (string, error) { return s.idToken, nil },
			IdPTokenURL: idp.URL + "/token", IdPClientID: "idp-app", IdPClientSecret: s.idpSecret},
		"authorization_code secret": &mcpadapter.OAuth{Issuer: legit.URL, ClientID: "cli-app", ClientSecret: s.clientSecret, OpenURL: user.open, Timeout: 5 * time.Second},
	}
}

// checkNothingLeaked fails if a secret reached the malicious servers, and
// checks the run reached them at all over the era's protocol (so that the
// check is about something).
func checkNothingLeaked(t *testing.T, evil *testauth.Evil, s secrets, firstRPC string) {
	t.Helper()
	got := evil.Received()
	noSecrets(t, "what the malicious servers received", got, s.all()...)
	if strings.Contains(got, "client_assertion") || strings.Contains(got, "assertion=") || strings.Contains(got, "subject_token") {
		t.Errorf("an assertion reached the malicious servers:\n%.2000s", got)
	}
	var reached bool
	for _, r := range evil.Seen() {
		if r.Server == "mcp" && r.RPC == firstRPC {
			reached = true
		}
		if r.Server == "as" && r.Path != "/.well-known/oauth-authorization-server" && r.Path != "/.well-known/openid-configuration" &&
			!strings.HasPrefix(r.Path, "/.well-known/") {
			t.Errorf("the malicious authorization server was sent %s %s", r.Method, r.Path)
		}
	}
	if !reached {
		t.Errorf("the malicious MCP server never received %s: the run did not test that protocol version (%v)", firstRPC, evil.Seen())
	}
}

// TestMaliciousServerGetsNoCredentials: for every flow, pinned to the
// legitimate issuer, against a malicious MCP server that names a
// malicious authorization server, over both protocol versions: the
// connect fails with an *AuthorizationError, and neither server receives
// a secret, an assertion or a token request; the user is never sent to
// sign in.
func TestMaliciousServerGetsNoCredentials(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	idp := testauth.StartIdP(t, "idp-app")
	legit := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "svc", ClientSecret: "unused", NoRegistration: true})
	for _, era := range authEras {
		for _, claim := range []string{"", legit.URL} {
			evil := testauth.StartEvil(t, testauth.EvilOptions{MCP: testserver.New(testserver.Options{Era: era.server}), ClaimIssuer: claim})
			s := newSecrets(t, legit, idp)
			user := &browser{}
			for name, a := range flows(legit, idp, s, user) {
				c, err := mcpadapter.NewClient(evil.MCPURL, &mcpadapter.ClientOptions{Auth: a, ProtocolVersion: era.version, ConnectTimeout: 10 * time.Second})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				_, err = c.Connect(ctx)
				c.Close()
				var ae *mcpadapter.AuthorizationError
				if !errors.As(err, &ae) {
					t.Errorf("%s, %s, issuer claimed %q: connect = %v, want an *AuthorizationError", era.name, name, claim, err)
				}
				if err != nil && !strings.Contains(err.Error(), "issuer") {
					t.Errorf("%s, %s: the error does not say the issuer does not match: %v", era.name, name, err)
				}
			}
			if user.count() != 0 {
				t.Errorf("%s: the user was sent to %v", era.name, user.opened)
			}
			checkNothingLeaked(t, evil, s, era.first)
		}
	}
	if n := len(legit.TokenRequests()); n != 0 {
		t.Errorf("the legitimate authorization server got %d token requests for the malicious server", n)
	}
}

// TestMaliciousServerControl: the malicious servers do catch a client
// that is not pinned (go-sdk's client credentials handler given no
// issuer), so that TestMaliciousServerGetsNoCredentials can fail.
func TestMaliciousServerControl(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	evil := testauth.StartEvil(t, testauth.EvilOptions{MCP: testserver.New(testserver.Options{})})
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: "svc", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "UNPINNED-SECRET"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcpadapter.NewClient(evil.MCPURL, &mcpadapter.ClientOptions{OAuthHandler: h, ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Connect(ctx)
	if !strings.Contains(evil.Received(), "UNPINNED-SECRET") {
		t.Fatalf("an unpinned client's secret did not reach the malicious authorization server: the recorder sees nothing\n%.3000s", evil.Received())
	}
}

// TestUnpinnedFlowsRefused: a flow that holds a secret and names no
// issuer is refused before anything is sent, with an error naming the
// setting.
func TestUnpinnedFlowsRefused(t *testing.T) {
	t.Parallel()
	evil := testauth.StartEvil(t, testauth.EvilOptions{MCP: testserver.New(testserver.Options{})})
	assertion := func(context.Context) (string, error) { return "x.y.z", nil }
	for name, tc := range map[string]struct {
		auth mcpadapter.Auth
		want string
	}{
		"client_credentials": {&mcpadapter.ClientCredentials{ClientID: "svc", ClientSecret: "s"}, "ClientCredentials.Issuer is empty"},
		"jwt_bearer":         {&mcpadapter.JWTBearer{Assertion: assertion}, "JWTBearer.Issuer is empty"},
		"enterprise":         {&mcpadapter.EnterpriseAuth{IDToken: assertion, IdPTokenURL: "https://idp.example/token", ClientID: "a"}, "EnterpriseAuth.Issuer is empty"},
		"oauth secret":       {&mcpadapter.OAuth{ClientID: "a", ClientSecret: "s"}, "OAuth.ClientSecret needs OAuth.Issuer"},
		"http issuer":        {&mcpadapter.ClientCredentials{Issuer: "http://as.example.com", ClientID: "svc", ClientSecret: "s"}, "want https"},
	} {
		_, err := mcpadapter.NewClient(evil.MCPURL, &mcpadapter.ClientOptions{Auth: tc.auth})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if got := evil.Seen(); len(got) != 0 {
		t.Errorf("the malicious servers were contacted: %v", got)
	}
}

// TestMaliciousServerConfigFiles: the same flows from a config file, the
// secrets in environment variables and files (an assertion file, an ID
// token file, a key file): nothing of them reaches the malicious servers,
// over both protocol versions. A file named in a member of another grant
// type is an error, not read.
func TestMaliciousServerConfigFiles(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	idp := testauth.StartIdP(t, "idp-app")
	legit := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), NoRegistration: true})
	dir := t.TempDir()
	for _, era := range authEras {
		evil := testauth.StartEvil(t, testauth.EvilOptions{MCP: testserver.New(testserver.Options{Era: era.server})})
		s := newSecrets(t, legit, idp)
		write := func(name, content string) string {
			p := filepath.Join(dir, era.name+"-"+name)
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		assertionFile, idTokenFile, keyFile := write("token", s.fileContent), write("id-token", s.idToken), write("key.pem", string(s.keyPEM))
		env := map[string]string{"CLIENT_SECRET": s.clientSecret, "IDP_SECRET": s.idpSecret}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		doc := fmt.Sprintf(`{"mcpServers": {
			"cc": {"url": %[1]q, "auth": {"type": "client_credentials", "issuer": %[2]q, "clientId": "svc", "clientSecret": "${CLIENT_SECRET}"}},
			"ck": {"url": %[1]q, "auth": {"type": "client_credentials", "issuer": %[2]q, "clientId": "svc", "privateKeyFile": %[3]q}},
			"wi": {"url": %[1]q, "auth": {"type": "jwt_bearer", "issuer": %[2]q, "clientId": "w", "assertionFile": %[4]q}},
			"ent": {"url": %[1]q, "auth": {"type": "enterprise", "issuer": %[2]q, "clientId": "app", "clientSecret": "${CLIENT_SECRET}",
				"idpTokenUrl": %[5]q, "idpClientId": "idp-app", "idpClientSecret": "${IDP_SECRET}", "idTokenFile": %[6]q}},
			"code": {"url": %[1]q, "auth": {"type": "oauth", "issuer": %[2]q, "clientId": "cli", "clientSecret": "${CLIENT_SECRET}"}}
		}}`, evil.MCPURL, legit.URL, keyFile, assertionFile, idp.URL+"/token", idTokenFile)
		cfg, err := mcpadapter.ParseConfigEnv([]byte(doc), lookup)
		if err != nil {
			t.Fatal(err)
		}
		user := &browser{}
		g, err := mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{
			Auth: &mcpadapter.OAuth{OpenURL: user.open, Timeout: 5 * time.Second}, ProtocolVersion: era.version, ConnectTimeout: 10 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		a, err := mcpadapter.New(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Tools(ctx)
		a.Close()
		if err == nil {
			t.Errorf("%s: the malicious servers' tools were listed", era.name)
		}
		for _, server := range []string{"cc", "ck", "wi", "ent", "code"} {
			if err != nil && !strings.Contains(err.Error(), server) {
				t.Errorf("%s: the error does not name server %s: %v", era.name, server, err)
			}
		}
		if user.count() != 0 {
			t.Errorf("%s: the user was sent to %v", era.name, user.opened)
		}
		checkNothingLeaked(t, evil, s, era.first)
	}

	// Files go only with the grant they belong to: a client_credentials
	// object naming an assertion file, or any grant naming no issuer, is
	// refused when parsed.
	for _, auth := range []string{
		`{"type": "client_credentials", "issuer": "https://as.example", "clientId": "a", "clientSecret": "s", "assertionFile": "/etc/hostname"}`,
		`{"type": "jwt_bearer", "clientId": "a", "assertionFile": "/etc/hostname"}`,
		`{"type": "enterprise", "issuer": "https://as.example", "clientId": "a", "idpTokenUrl": "https://idp.example/token", "idTokenFile": "/t", "privateKeyFile": "/etc/hostname"}`,
	} {
		if _, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {"s": {"url": "https://mcp.example/mcp", "auth": ` + auth + `}}}`)); err == nil {
			t.Errorf("accepted: %s", auth)
		}
	}
}

// TestAssertionAudienceChecked: a workload token whose aud is another
// server is not sent, even to the pinned issuer; one for the issuer is.
func TestAssertionAudienceChecked(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	key := newKey(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "workload", AssertionKey: key.Public(), NoRegistration: true})
	sign := func(aud string) string {
		tok, err := oauthflow.SignJWT(key, nil, map[string]any{"sub": "w", "aud": aud, "exp": time.Now().Add(time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	other := sign("https://kubernetes.default.svc")
	a := grantClient(t, as.MCPURL, &mcpadapter.JWTBearer{Issuer: as.URL, ClientID: "workload", Assertion: func(context.Context) (string, error) { return other, nil }}, io.Discard)
	if _, err := a.Tools(ctx); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Errorf("an assertion for another audience: %v", err)
	}
	if n := len(as.TokenRequests()); n != 0 {
		t.Errorf("the assertion for another audience was sent (%d token requests)", n)
	}
	good := sign(as.URL)
	b := grantClient(t, as.MCPURL, &mcpadapter.JWTBearer{Issuer: as.URL, ClientID: "workload", Assertion: func(context.Context) (string, error) { return good, nil }}, io.Discard)
	mustCall(t, ctx, toolMap(t, ctx, b)["echo"], `{"text":"x"}`)
	reqs := as.TokenRequests()
	if len(reqs) != 1 || reqs[0].Get("resource") != as.MCPURL {
		t.Errorf("token requests %v: want one, with the MCP server as its resource", reqs)
	}
}
