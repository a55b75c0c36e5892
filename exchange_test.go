package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"golang.org/x/oauth2"
)

// TestTokenExchanger: a user's access token is exchanged at the issuer
// for a token for the MCP server, which the server takes as that user's; a
// token the issuer refuses gives an *ExchangeError with its OAuth code,
// quoting neither the token nor the client's secret; settings that cannot
// work are refused by name.
func TestTokenExchanger(t *testing.T) {
	const secret = "exchange-secret-42"
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true, ClientID: "svc", ClientSecret: secret,
		NoRegistration: true, NoPKCE: true, TokenExchange: true, RefuseExchange: []string{"mallory"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	x, alice, tok := exchangeAlice(t, ctx, &mcpadapter.TokenExchange{Issuer: as.URL, ClientID: "svc", ClientSecret: secret,
		Resource: as.MCPURL, Scopes: []string{testauth.BaseScope}}, as)
	if tok.AccessToken == alice || tok.Expiry.IsZero() {
		t.Fatalf("exchanged %q, expiry %v", tok.AccessToken, tok.Expiry)
	}
	connectAs(t, ctx, as, tok.AccessToken, "alice")
	form := as.TokenRequests()[0]
	if form.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" || form.Get("resource") != as.MCPURL {
		t.Errorf("the exchange's form: %v", form)
	}

	mallory, _ := as.SignToken(map[string]any{"sub": "mallory", "aud": "https://gw.example/mcp"})
	_, err := x.Exchange(ctx, mallory)
	var xe *mcpadapter.ExchangeError
	if !errors.As(err, &xe) || xe.Code != "invalid_grant" || xe.Issuer != as.URL {
		t.Fatalf("refused: %v", err)
	}
	if strings.Contains(err.Error(), mallory) || strings.Contains(err.Error(), secret) {
		t.Errorf("the error quotes a secret: %v", err)
	}

	checkBadExchanges(t, []badExchange{
		{mcpadapter.TokenExchange{ClientID: "c", Resource: "https://m/mcp"}, "Issuer is empty"},
		{mcpadapter.TokenExchange{Issuer: "http://as.example", ClientID: "c", Resource: "https://m/mcp"}, "Issuer"},
		{mcpadapter.TokenExchange{Issuer: "https://as.example", Resource: "https://m/mcp"}, "ClientID is empty"},
		{mcpadapter.TokenExchange{Issuer: "https://as.example", ClientID: "c"}, "Resource is empty"},
	})
}

// exchangeAlice returns the exchanger of cfg, alice's access token signed
// by signer, and the token it was exchanged for.
func exchangeAlice(t *testing.T, ctx context.Context, cfg *mcpadapter.TokenExchange, signer *testauth.Server) (*mcpadapter.TokenExchanger, string, *oauth2.Token) {
	t.Helper()
	x, err := mcpadapter.NewTokenExchanger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := signer.SignToken(map[string]any{"sub": "alice", "aud": "https://gw.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := x.Exchange(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	return x, alice, tok
}

// connectAs connects to the MCP endpoint of srv with tok, and checks that
// srv took every request it received as user's.
func connectAs(t *testing.T, ctx context.Context, srv *testauth.Server, tok, user string) {
	t.Helper()
	c, err := mcpadapter.NewClient(srv.MCPURL, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken(tok)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if r.User != user {
			t.Errorf("a request reached the server as %q, not %q", r.User, user)
		}
	}
}

// badExchange is settings NewTokenExchanger refuses, with an error saying
// want.
type badExchange struct {
	cfg  mcpadapter.TokenExchange
	want string
}

func checkBadExchanges(t *testing.T, bad []badExchange) {
	t.Helper()
	for _, b := range bad {
		if _, err := mcpadapter.NewTokenExchanger(&b.cfg); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v, want an error saying %q", b.cfg, err, b.want)
		}
	}
}

// TestTokenExchangeConfigOutsideGateway: a Client made of a config entry
// whose auth is a token exchange is refused, saying the gateway makes it.
func TestTokenExchangeConfigOutsideGateway(t *testing.T) {
	cfg, err := mcpadapter.ParseConfig([]byte(`{"mcpServers":{"x":{"url":"https://x.example/mcp","auth":{"type":"token_exchange","issuer":"https://as.example","clientId":"g"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcpadapter.NewGroup(cfg, nil); err == nil || !strings.Contains(err.Error(), "mcpServers.x.auth") || !strings.Contains(err.Error(), "gateway") {
		t.Errorf("NewGroup: %v", err)
	}
}

// TestTokenExchangerIDJAG: with IDJAG, a user's access token is exchanged
// at the identity provider for an ID-JAG, presented at the MCP server's
// authorization server for a token the server takes as that user's, and
// the service's own token is the client credentials grant there. An MCP
// server whose metadata names another authorization server than the one
// configured is refused, naming both, before the identity provider or any
// authorization server is sent anything; settings that cannot work are
// refused by name.
func TestTokenExchangerIDJAG(t *testing.T) {
	const secret = "as-secret-9f1e"
	gwAS := testauth.Start(t, testauth.Options{JWT: true, NoRegistration: true, NoPKCE: true})
	idp := testauth.StartIdP(t, "unused")
	idp.AcceptAccessTokens(gwAS)
	up := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "svc", ClientSecret: secret,
		NoRegistration: true, NoPKCE: true, AssertionKey: idp.PublicKey()})
	other := testauth.Start(t, testauth.Options{ClientID: "svc", ClientSecret: secret, NoRegistration: true, NoPKCE: true, AssertionKey: idp.PublicKey()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := func(as string) *mcpadapter.TokenExchange {
		return &mcpadapter.TokenExchange{Issuer: idp.URL, ClientID: "svc", Resource: up.MCPURL, Scopes: []string{testauth.BaseScope},
			IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: as, ClientSecret: secret}}
	}
	x, alice, tok := exchangeAlice(t, ctx, cfg(up.URL), gwAS)
	connectAs(t, ctx, up, tok.AccessToken, "alice")
	if own, err := x.ClientToken(ctx); err != nil || own.AccessToken == "" || up.Counts().ClientCredentials != 1 {
		t.Errorf("the service's own token: %v, %d grants", err, up.Counts().ClientCredentials)
	}

	// A server naming up as its authorization server, with other configured.
	y, err := mcpadapter.NewTokenExchanger(cfg(other.URL))
	if err != nil {
		t.Fatal(err)
	}
	asked := idp.Exchanges()
	for what, f := range map[string]func() error{
		"exchange":     func() error { _, err := y.Exchange(ctx, alice); return err },
		"client token": func() error { _, err := y.ClientToken(ctx); return err },
	} {
		err := f()
		var xe *mcpadapter.ExchangeError
		if !errors.As(err, &xe) || !strings.Contains(err.Error(), up.URL) || !strings.Contains(err.Error(), other.URL) {
			t.Errorf("%s with another authorization server configured than the server names: %v, want both named", what, err)
		}
	}
	if n := len(idp.TokenRequests()) - asked; n != 0 || len(other.TokenRequests()) != 0 {
		t.Errorf("sent anyway: %d requests to the identity provider, %d to the configured authorization server", n, len(other.TokenRequests()))
	}

	checkBadExchanges(t, []badExchange{
		{mcpadapter.TokenExchange{Issuer: idp.URL, ClientID: "svc", Resource: up.MCPURL, IDJAG: &mcpadapter.IDJAGExchange{}}, "IDJAG.AuthorizationServer"},
		{mcpadapter.TokenExchange{Issuer: idp.URL, ClientID: "svc", Resource: up.MCPURL, IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: "http://as.example.com"}}, "IDJAG.AuthorizationServer"},
		{mcpadapter.TokenExchange{Issuer: idp.URL, ClientID: "svc", Resource: up.MCPURL, Audience: "crm", IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: up.URL}}, "Audience"},
	})
}

// TestTokenExchangerIDJAGSettings: an IDJAG.AuthorizationServer that
// cannot work is refused naming that setting as a user sets it (the Go
// field, and the config's "authorizationServer"), never a field it does
// not have or the identity provider's "issuer".
func TestTokenExchangerIDJAGSettings(t *testing.T) {
	for _, as := range []string{"", "http://as.example.com", "javascript:alert(1)", "https://10.0.0.1"} {
		_, err := mcpadapter.NewTokenExchanger(&mcpadapter.TokenExchange{Issuer: "https://idp.example.com", ClientID: "svc",
			Resource: "https://crm.example.com/mcp", IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: as}})
		if err == nil {
			t.Errorf("AuthorizationServer %q: no error", as)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "TokenExchange.IDJAG.AuthorizationServer") || strings.Contains(msg, "AuthorizationServer.Issuer") ||
			strings.Contains(msg, `"issuer"`) || !strings.Contains(msg, `"authorizationServer"`) {
			t.Errorf("AuthorizationServer %q: %q, want it named as TokenExchange.IDJAG.AuthorizationServer and \"authorizationServer\"", as, msg)
		}
	}
}

// startEchoIssuer starts an authorization server whose token endpoint
// refuses every request, echoing in its error_description what it was
// sent: the subject token, the assertion and the client's secret (from
// its Basic header or the form). It returns its issuer URL.
func startEchoIssuer(t *testing.T) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/token" {
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token"})
			return
		}
		_ = r.ParseForm()
		_, secret, _ := r.BasicAuth()
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": fmt.Sprintf(
			"no: subject_token=%s assertion=%s secret=%s%s", r.PostForm.Get("subject_token"), r.PostForm.Get("assertion"), secret, r.PostForm.Get("client_secret"))})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTokenExchangerEchoes: an issuer, identity provider or authorization
// server that refuses a request echoing what it was sent (an opaque
// subject token, the ID-JAG, the client's secret) gets an *ExchangeError
// with its OAuth code that quotes none of it.
func TestTokenExchangerEchoes(t *testing.T) {
	const subject, idpSecret, asSecret = "opaque-subject-7f3a9c2e51d0", "idp-secret-41c8e2a7", "as-secret-90b1d3f6"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gwAS := testauth.Start(t, testauth.Options{JWT: true, NoRegistration: true, NoPKCE: true})
	idp := testauth.StartIdP(t, "unused")
	idp.AcceptAccessTokens(gwAS)
	alice, err := gwAS.SignToken(map[string]any{"sub": "alice", "aud": "https://gw.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	const resource = "https://crm.example.com/mcp"
	for _, c := range []struct {
		name    string
		cfg     mcpadapter.TokenExchange
		subject string
	}{
		{"issuer", mcpadapter.TokenExchange{Issuer: startEchoIssuer(t), ClientID: "svc", ClientSecret: idpSecret, Resource: resource}, subject},
		{"identity provider", mcpadapter.TokenExchange{Issuer: startEchoIssuer(t), ClientID: "svc", ClientSecret: idpSecret, Resource: resource,
			IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: startEchoIssuer(t), ClientSecret: asSecret}}, subject},
		{"authorization server", mcpadapter.TokenExchange{Issuer: idp.URL, ClientID: "svc", ClientSecret: idpSecret, Resource: resource,
			IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: startEchoIssuer(t), ClientSecret: asSecret}}, alice},
	} {
		x, err := mcpadapter.NewTokenExchanger(&c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = x.Exchange(ctx, c.subject)
		var xe *mcpadapter.ExchangeError
		if !errors.As(err, &xe) || xe.Code != "invalid_grant" {
			t.Errorf("%s: %v, want an *ExchangeError with invalid_grant", c.name, err)
			continue
		}
		for _, s := range []string{subject, alice, idpSecret, asSecret, "eyJ"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error quotes what the server echoed (%.10s...): %v", c.name, s, err)
			}
		}
	}
}
