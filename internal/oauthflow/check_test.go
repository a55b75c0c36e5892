package oauthflow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"
	"time"
)

// TestChecks checks that each setting that cannot work is refused by its
// public name, before anything is sent, and that good settings pass.
func TestChecks(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const iss = "https://as.example"
	src := AssertionSource(func(context.Context) (string, error) { return "jwt", nil })
	idp := Enterprise{IDToken: src, IdPIssuer: "https://idp.example", Client: ClientAuth{ClientID: "app"}}
	for _, c := range []struct {
		name string
		err  error
		want string // "" for none
	}{
		{"cc ok", CheckClientCredentials(iss, ClientAuth{ClientID: "a", Key: key}, key), ""},
		{"cc no issuer", CheckClientCredentials("", ClientAuth{ClientID: "a", ClientSecret: "s"}, nil), "ClientCredentials.Issuer is empty"},
		{"cc http issuer", CheckClientCredentials("http://as.example", ClientAuth{ClientID: "a", ClientSecret: "s"}, nil), "ClientCredentials.Issuer:"},
		{"cc no id", CheckClientCredentials(iss, ClientAuth{ClientSecret: "s"}, nil), "ClientCredentials.ClientID is empty"},
		{"cc no secret", CheckClientCredentials(iss, ClientAuth{ClientID: "a"}, nil), "needs ClientSecret or PrivateKey"},
		{"jwt ok", CheckJWTBearer(iss, src, nil), ""},
		{"jwt no assertion", CheckJWTBearer(iss, nil, nil), "JWTBearer.Assertion is nil"},
		{"ent ok", CheckEnterprise(iss, idp, nil), ""},
		{"ent no idp", CheckEnterprise(iss, Enterprise{IDToken: src, Client: ClientAuth{ClientID: "app"}}, nil), "needs IdPTokenURL or IdPIssuer"},
		{"ent bad idp", CheckEnterprise(iss, Enterprise{IDToken: src, IdPTokenURL: "ftp://x", Client: ClientAuth{ClientID: "app"}}, nil), "EnterpriseAuth.IdPTokenURL:"},
		{"ent no client", CheckEnterprise(iss, Enterprise{IDToken: src, IdPIssuer: "https://idp.example"}, nil), "EnterpriseAuth.ClientID is empty"},
		{"oauth ok", CheckOAuth(Config{ClientID: "a", ClientSecret: "s", Issuer: iss, Timeout: time.Minute}, key), ""},
		{"oauth secret alone", CheckOAuth(Config{ClientSecret: "s"}, nil), "need OAuth.ClientID"},
		{"oauth secret no issuer", CheckOAuth(Config{ClientID: "a", ClientSecret: "s"}, nil), "OAuth.ClientSecret needs OAuth.Issuer"},
		{"oauth negative timeout", CheckOAuth(Config{Timeout: -time.Second}, nil), "OAuth.Timeout -1s is negative"},
		{"oauth bad redirect", CheckOAuth(Config{RedirectURL: "https://example.com/cb"}, nil), "RedirectURL"},
	} {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("%s: %v", c.name, c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
			t.Errorf("%s: err = %v, want %q", c.name, c.err, c.want)
		}
	}
}
