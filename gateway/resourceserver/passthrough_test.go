package resourceserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
)

// TestNoCredentialReachesServer: the server behind the gateway never gets
// the client's credential (a JWT, a DPoP-bound token or its proof, an API
// key, an opaque token), which the MCP specification forbids passing
// through; the calls do reach it.
func TestNoCredentialReachesServer(t *testing.T) {
	const key = "k-0123456789abcdef-carol"
	e := setup(t, func(o *testauth.Options) { o.JWT = false }, func(e *env, o *resourceserver.Options) {
		o.APIKeys = []resourceserver.APIKey{{Principal: "carol", Key: key}}
		o.Introspection = &resourceserver.Introspection{URL: e.as.URL + "/introspect", ClientID: clientID, ClientSecret: clientSecret}
	})
	p := newProofEnvFor(t, e)
	jwt := e.token(t, nil)
	opaque := e.opaqueToken(t)
	start := e.upstream.Load()
	e.mustPass(t, "a JWT", e.post(t, bearer(jwt)), start)
	e.mustPass(t, "an API key", e.post(t, bearer(key)), start+1)
	e.mustPass(t, "an opaque token", e.post(t, bearer(opaque)), start+2)
	proof := p.proof(nil)
	e.mustPass(t, "a DPoP-bound token", e.post(t, map[string]string{"Authorization": "DPoP " + p.tok, "DPoP": proof}), start+3)
	seen := e.upHeaders.String()
	for name, secret := range map[string]string{"JWT": jwt, "API key": key, "opaque token": opaque, "bound token": p.tok, "proof": proof, "client secret": clientSecret} {
		if strings.Contains(seen, secret) {
			t.Errorf("the server got the client's %s", name)
		}
	}
}

// newProofEnvFor is a DPoP key and a token bound to it, issued by e's
// authorization server for e's gateway.
func newProofEnvFor(t testing.TB, e *env) *proofEnv {
	p := newProofEnv(t)
	p.resource = e.url
	p.tok = e.token(t, map[string]any{"cnf": map[string]any{"jkt": thumbprint(t, p)}})
	return p
}

func thumbprint(t testing.TB, p *proofEnv) string {
	t.Helper()
	d, err := oauthflow.NewDPoP(p.key)
	if err != nil {
		t.Fatal(err)
	}
	return d.Thumbprint()
}

// TestMaliciousIntrospection plays an introspection endpoint that says
// what it likes: a token for another audience, one without any audience
// (it could be another resource server's, replayed here by that server),
// an expired or not yet valid one, "active" as a string, a huge or slow
// answer: none is accepted, the slow and huge ones get 503 within the
// Guard's timeout, nothing reaches the server, and neither the gateway's
// client secret nor the token is logged or put in the endpoint's URL.
func TestMaliciousIntrospection(t *testing.T) {
	var resource atomic.Value
	var badRequests atomic.Int64
	stop := make(chan struct{})
	is := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != clientID || secret != clientSecret || r.URL.RawQuery != "" || r.ParseForm() != nil {
			badRequests.Add(1)
		}
		tok := r.PostForm.Get("token")
		now := time.Now().Unix()
		ans := map[string]any{"active": true, "sub": "eve", "scope": testauth.BaseScope, "aud": resource.Load(), "exp": now + 600}
		switch {
		case strings.HasPrefix(tok, "other-aud"):
			ans["aud"] = "https://other.example.com/mcp"
		case strings.HasPrefix(tok, "no-aud"):
			delete(ans, "aud")
		case strings.HasPrefix(tok, "expired"):
			ans["exp"] = now - 3600
		case strings.HasPrefix(tok, "not-yet"):
			ans["nbf"] = now + 3600
		case strings.HasPrefix(tok, "string-active"):
			ans["active"] = "true"
		case strings.HasPrefix(tok, "huge"):
			w.Write([]byte(`{"active":true,"sub":"eve","pad":"`))
			w.Write([]byte(strings.Repeat("x", 2<<20)))
			w.Write([]byte(`"}`))
			return
		case strings.HasPrefix(tok, "slow"):
			select {
			case <-stop:
			case <-r.Context().Done():
			}
			return
		}
		_ = json.NewEncoder(w).Encode(ans)
	}))
	t.Cleanup(func() { close(stop); is.Close() })
	e := setup(t, nil, func(e *env, o *resourceserver.Options) {
		introspecting(time.Minute)(e, o)
		o.Introspection.URL = is.URL
		o.Timeout = 500 * time.Millisecond
	})
	resource.Store(e.url)
	start := e.upstream.Load()
	e.mustPass(t, "a token for the gateway", e.post(t, bearer("good-0123456789")), start)
	before := e.upstream.Load()
	for _, tok := range []string{"other-aud-0123456789", "no-aud-0123456789", "expired-0123456789", "not-yet-0123456789", "string-active-0123456789"} {
		e.mustRefuse(t, tok, e.post(t, bearer(tok)), http.StatusUnauthorized, "invalid_token", before)
	}
	for _, tok := range []string{"huge-0123456789", "slow-0123456789"} {
		if resp := e.post(t, bearer(tok)); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("%s: status %d, want 503", tok, resp.StatusCode)
		}
	}
	if n := e.upstream.Load(); n != before {
		t.Errorf("%d refused calls reached the server", n-before)
	}
	if n := badRequests.Load(); n != 0 {
		t.Errorf("%d introspection requests without the client's credentials in Basic, or with a query", n)
	}
	if log := e.logs.String(); strings.Contains(log, clientSecret) || strings.Contains(log, "0123456789") {
		t.Errorf("the log holds the client secret or a token:\n%s", log)
	}
}

// TestMetadataIgnoresHost: a client (or a web page, by DNS rebinding)
// that sends another Host gets the same metadata and challenges: the
// resource and the resource_metadata come from Options.Resource only.
func TestMetadataIgnoresHost(t *testing.T) {
	e := setup(t, nil, nil)
	get := func(method, u string) *http.Response {
		req, _ := http.NewRequest(method, u, strings.NewReader(callBody))
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get(http.MethodGet, e.guard.MetadataURL())
	var md struct {
		Resource string `json:"resource"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil || md.Resource != e.url {
		t.Errorf("metadata with Host evil.example: resource %q (%v), want %q", md.Resource, err, e.url)
	}
	resp = get(http.MethodPost, e.url)
	ch := strings.Join(resp.Header.Values("WWW-Authenticate"), "\n")
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(ch, "evil") || !strings.Contains(ch, fmt.Sprintf("resource_metadata=%q", e.guard.MetadataURL())) {
		t.Errorf("a request with Host evil.example: %d %q", resp.StatusCode, ch)
	}
	u, _ := url.Parse(e.guard.MetadataURL())
	if u.Host == "evil.example" {
		t.Error("MetadataURL names the Host header")
	}
}

// TestIntrospectionRedirectNotFollowed: an introspection endpoint that
// answers with a redirect does not take the gateway's client secret, or
// the token, to where it points; the token is not accepted.
func TestIntrospectionRedirectNotFollowed(t *testing.T) {
	var reached atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "sub": "eve", "scope": testauth.BaseScope})
	}))
	t.Cleanup(elsewhere.Close)
	is := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/introspect", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(is.Close)
	e := setup(t, nil, func(e *env, o *resourceserver.Options) {
		introspecting(time.Minute)(e, o)
		o.Introspection.URL = is.URL
	})
	before := e.upstream.Load()
	if resp := e.post(t, bearer("opaque-0123456789")); resp.StatusCode == http.StatusOK {
		t.Errorf("a token the redirected introspection vouched for was accepted")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect was followed: %d requests reached its target", n)
	}
	if n := e.upstream.Load(); n != before {
		t.Errorf("%d calls reached the server", n-before)
	}
}
