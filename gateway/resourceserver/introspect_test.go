package resourceserver_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
)

// opaqueToken gets an opaque access token for the gateway from the
// authorization server (the client credentials grant).
func (e *env) opaqueToken(t testing.TB) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {testauth.BaseScope}, "resource": {e.url}}
	req, _ := http.NewRequest(http.MethodPost, e.as.URL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, clientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || !strings.HasPrefix(tr.AccessToken, "at-") {
		t.Fatalf("token: %v %q", err, tr.AccessToken)
	}
	return tr.AccessToken
}

// introspecting makes the Guard check tokens by introspection only, its
// answers cached for ttl.
func introspecting(ttl time.Duration) func(*env, *resourceserver.Options) {
	return func(e *env, o *resourceserver.Options) {
		o.Issuers = nil
		o.Introspection = &resourceserver.Introspection{URL: e.as.URL + "/introspect", ClientID: clientID, ClientSecret: clientSecret, CacheTTL: ttl}
	}
}

// TestIntrospection: an opaque token is checked at the authorization
// server's introspection endpoint, once while its answer is cached; a
// token the server does not know (active: false) is refused; an answer
// is not kept past the token's expiry.
func TestIntrospection(t *testing.T) {
	e := setup(t, func(o *testauth.Options) { o.JWT = false; o.TokenTTL = 2 * time.Second }, introspecting(time.Hour))
	tok := e.opaqueToken(t)
	start := e.upstream.Load()
	e.mustPass(t, "an opaque token", e.post(t, bearer(tok)), start)
	e.mustPass(t, "again", e.post(t, bearer(tok)), start+1)
	if n := e.as.Counts().Introspections; n != 1 {
		t.Errorf("%d introspections for two requests, want 1 (cached)", n)
	}
	before := e.upstream.Load()
	e.mustRefuse(t, "an unknown token", e.post(t, bearer("at-forged")), http.StatusUnauthorized, "invalid_token", before)
	// The answer lives no longer than the token (2 s).
	time.Sleep(2100 * time.Millisecond)
	e.mustRefuse(t, "an expired token", e.post(t, bearer(tok)), http.StatusUnauthorized, "invalid_token", before)
}

// TestIntrospectionRevoked: without a cache, a revoked token is refused at
// once; a DPoP-bound opaque token (cnf.jkt in the answer) needs its proof.
func TestIntrospectionRevoked(t *testing.T) {
	e := setup(t, func(o *testauth.Options) { o.JWT = false }, introspecting(-1))
	tok := e.opaqueToken(t)
	start := e.upstream.Load()
	e.mustPass(t, "an opaque token", e.post(t, bearer(tok)), start)
	e.as.Revoke()
	before := e.upstream.Load()
	e.mustRefuse(t, "a revoked token", e.post(t, bearer(tok)), http.StatusUnauthorized, "invalid_token", before)
}

// TestJWTAndIntrospection: with both, a JWT of a trusted issuer is
// verified locally (no introspection), any other token is introspected.
func TestJWTAndIntrospection(t *testing.T) {
	e := setup(t, func(o *testauth.Options) { o.JWT = false }, func(e *env, o *resourceserver.Options) {
		o.Introspection = &resourceserver.Introspection{URL: e.as.URL + "/introspect", ClientID: clientID, ClientSecret: clientSecret}
	})
	start := e.upstream.Load()
	e.mustPass(t, "a JWT", e.post(t, bearer(e.token(t, nil))), start)
	if n := e.as.Counts().Introspections; n != 0 {
		t.Errorf("a JWT of a trusted issuer was introspected (%d)", n)
	}
	e.mustPass(t, "an opaque token", e.post(t, bearer(e.opaqueToken(t))), start+1)
	if n := e.as.Counts().Introspections; n != 1 {
		t.Errorf("%d introspections for one opaque token", n)
	}
}
