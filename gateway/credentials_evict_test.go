package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway/internal/subject"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
)

// TestExchangedBounded: the exchanged tokens a server's credentials keep
// stay within their bound whatever the exchanges gave: a principal whose
// every token the authorization server refuses, presenting token after
// token, leaves nothing behind, and principals with many tokens push out
// the oldest.
func TestExchangedBounded(t *testing.T) {
	as := testauth.Start(t, testauth.Options{JWT: true, ClientID: "gw", ClientSecret: "gw-secret", NoRegistration: true,
		TokenExchange: true, RefuseExchange: []string{"mallory"}})
	x, err := mcpadapter.NewTokenExchanger(&mcpadapter.TokenExchange{Issuer: as.URL, ClientID: "gw", ClientSecret: "gw-secret",
		Resource: as.MCPURL, Scopes: []string{testauth.BaseScope}})
	if err != nil {
		t.Fatal(err)
	}
	c := newPrincipalCreds("s", x)
	c.max = 8
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	present := func(user string) error {
		tok, err := as.SignToken(map[string]any{"sub": user, "aud": "gateway", "scope": testauth.BaseScope})
		if err != nil {
			t.Fatal(err)
		}
		return c.ensure(subject.With(ctx, tok), user)
	}
	for i := range 40 {
		if err := present("mallory"); err == nil {
			t.Fatalf("mallory's token %d was exchanged", i)
		}
	}
	size := func() (int, int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.byKey), len(c.latest)
	}
	if n, _ := size(); n != 0 {
		t.Errorf("%d entries kept for 40 refused exchanges, want 0", n)
	}
	for i := range 40 {
		if err := present(fmt.Sprintf("user%d", i%12)); err != nil {
			t.Fatal(err)
		}
		if n, l := size(); n > c.max || l > c.max {
			t.Fatalf("after %d exchanges: %d tokens and %d latest kept, over the bound %d", i+1, n, l, c.max)
		}
	}
	for i := range 20 {
		if err := present("mallory"); err == nil {
			t.Fatalf("mallory's token %d was exchanged", i)
		}
	}
	if n, l := size(); n > c.max || l > c.max {
		t.Errorf("%d tokens and %d latest kept, over the bound %d", n, l, c.max)
	}
}
