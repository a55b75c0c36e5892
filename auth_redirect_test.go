package mcpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestTokenRequestNotRedirected: the pinned authorization server's token
// endpoint answers 307 to another server (an open redirect, a misrouted
// proxy): the token request, which carries the client secret, a client
// assertion, a workload token or an ID-JAG and a DPoP proof, is not sent
// on there. The other server (the recording testauth.Evil authorization
// server) receives nothing.
func TestTokenRequestNotRedirected(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	idp := testauth.StartIdP(t, "idp-app")
	var evil *testauth.Evil
	var pinned *httptest.Server
	pinned = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": pinned.URL, "token_endpoint": pinned.URL + "/token"})
		case "/token":
			http.Redirect(w, r, evil.ASURL+"/token", http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	defer pinned.Close()
	evil = testauth.StartEvil(t, testauth.EvilOptions{MCP: testserver.New(testserver.Options{}), AuthorizationServers: []string{pinned.URL}})

	wl := newKey(t)
	workload, err := oauthflow.SignJWT(wl, nil, map[string]any{"sub": "w", "aud": pinned.URL, "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	dpop, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "PINNED-CLIENT-SECRET"
	idToken := idp.IDToken(t, "alice@example.com")
	for name, a := range map[string]mcpadapter.Auth{
		"client_credentials secret": &mcpadapter.ClientCredentials{Issuer: pinned.URL, ClientID: "svc", ClientSecret: secret, DPoPKey: dpop},
		"client_credentials key":    &mcpadapter.ClientCredentials{Issuer: pinned.URL, ClientID: "svc", PrivateKey: newKey(t)},
		"jwt_bearer": &mcpadapter.JWTBearer{Issuer: pinned.URL, ClientID: "w",
			Assertion: func(context.Context) (string, error) { return workload, nil }},
		"enterprise": &mcpadapter.EnterpriseAuth{Issuer: pinned.URL, ClientID: "app", ClientSecret: secret,
			IDToken:     func(context.Context) (string, error) { return idToken, nil },
			IdPTokenURL: idp.URL + "/token", IdPClientID: "idp-app"},
	} {
		c, err := mcpadapter.NewClient(evil.MCPURL, &mcpadapter.ClientOptions{Auth: a, ConnectTimeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.Connect(ctx); err == nil {
			t.Errorf("%s: connected", name)
		}
		c.Close()
	}
	got := evil.Received()
	noSecrets(t, "what the other server received", got, secret, workload, workload[strings.LastIndexByte(workload, '.')+1:])
	for _, r := range evil.Seen() {
		if r.Server == "as" {
			t.Errorf("the token request was redirected to the other server: %s %s\n%.3000s", r.Method, r.Path, got)
		}
	}
	if idp.Exchanges() == 0 {
		t.Errorf("the enterprise flow never reached its token request: the test tested nothing for it")
	}
}
