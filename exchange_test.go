package mcpadapter_test

import (
	"context"
	"errors"
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
