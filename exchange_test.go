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
	x, err := mcpadapter.NewTokenExchanger(&mcpadapter.TokenExchange{Issuer: as.URL, ClientID: "svc", ClientSecret: secret,
		Resource: as.MCPURL, Scopes: []string{testauth.BaseScope}})
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := as.SignToken(map[string]any{"sub": "alice", "aud": "https://gw.example/mcp"})
	tok, err := x.Exchange(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == alice || tok.Expiry.IsZero() {
		t.Fatalf("exchanged %q, expiry %v", tok.AccessToken, tok.Expiry)
	}
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken(tok.AccessToken)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range as.Requests() {
		if r.User != "alice" {
			t.Errorf("a request reached the server as %q", r.User)
		}
	}
	form := as.TokenRequests()[0]
	if form.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" || form.Get("resource") != as.MCPURL {
		t.Errorf("the exchange's form: %v", form)
	}

	mallory, _ := as.SignToken(map[string]any{"sub": "mallory", "aud": "https://gw.example/mcp"})
	_, err = x.Exchange(ctx, mallory)
	var xe *mcpadapter.ExchangeError
	if !errors.As(err, &xe) || xe.Code != "invalid_grant" || xe.Issuer != as.URL {
		t.Fatalf("refused: %v", err)
	}
	if strings.Contains(err.Error(), mallory) || strings.Contains(err.Error(), secret) {
		t.Errorf("the error quotes a secret: %v", err)
	}

	for _, bad := range []struct {
		cfg  mcpadapter.TokenExchange
		want string
	}{
		{mcpadapter.TokenExchange{ClientID: "c", Resource: "https://m/mcp"}, "Issuer is empty"},
		{mcpadapter.TokenExchange{Issuer: "http://as.example", ClientID: "c", Resource: "https://m/mcp"}, "Issuer"},
		{mcpadapter.TokenExchange{Issuer: "https://as.example", Resource: "https://m/mcp"}, "ClientID is empty"},
		{mcpadapter.TokenExchange{Issuer: "https://as.example", ClientID: "c"}, "Resource is empty"},
	} {
		if _, err := mcpadapter.NewTokenExchanger(&bad.cfg); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.cfg, err, bad.want)
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
