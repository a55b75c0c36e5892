package resourceserver_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
)

// TestUnavailable: a JWKS endpoint that hangs or serves garbage, issuer
// metadata that is garbage, an introspection endpoint that is down: each
// request gets a 503 with Retry-After within the Guard's timeout, the log
// says why, and nothing reaches the server.
func TestUnavailable(t *testing.T) {
	hang := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(hang); hanging.Close() })
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`<html>{"keys": [`))
	}))
	t.Cleanup(garbage.Close)
	noKeys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A symmetric key only: never used to verify.
		json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{"kty": "oct", "k": "c2VjcmV0", "kid": "s"}}})
	}))
	t.Cleanup(noKeys.Close)
	down := closedURL(t)

	cases := map[string]func(*env, *resourceserver.Options){
		"JWKS hangs":         func(_ *env, o *resourceserver.Options) { o.JWKSURL = hanging.URL },
		"JWKS garbage":       func(_ *env, o *resourceserver.Options) { o.JWKSURL = garbage.URL },
		"JWKS only a secret": func(_ *env, o *resourceserver.Options) { o.JWKSURL = noKeys.URL },
		"JWKS down":          func(_ *env, o *resourceserver.Options) { o.JWKSURL = down },
		"introspection down": func(e *env, o *resourceserver.Options) { introspecting(time.Minute)(e, o); o.Introspection.URL = down },
		"introspection hangs": func(e *env, o *resourceserver.Options) {
			introspecting(time.Minute)(e, o)
			o.Introspection.URL = hanging.URL
		},
		"introspection garbage": func(e *env, o *resourceserver.Options) {
			introspecting(time.Minute)(e, o)
			o.Introspection.URL = garbage.URL
		},
	}
	for name, adjust := range cases {
		t.Run(name, func(t *testing.T) {
			e := setup(t, nil, func(e *env, o *resourceserver.Options) {
				o.Timeout = 300 * time.Millisecond
				adjust(e, o)
			})
			tok := e.token(t, nil)
			if strings.Contains(name, "introspection") {
				tok = "opaque-" + strings.Repeat("x", 20)
			}
			before := e.upstream.Load()
			for range 2 {
				resp := e.post(t, bearer(tok))
				if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
					t.Errorf("status %d, Retry-After %q: want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
				}
			}
			if n := e.upstream.Load(); n != before {
				t.Errorf("%d calls reached the server", n-before)
			}
			log := e.logs.String()
			if !strings.Contains(log, "status=503") || strings.Contains(log, tok) {
				t.Errorf("the log does not say why, or holds the token: %s", log)
			}
		})
	}
}

// closedURL is the URL of a port nobody listens on.
func closedURL(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String() + "/x"
	ln.Close()
	return u
}

// TestAPIKeys: a static key makes the request its principal's; another
// key, or a key in the DPoP scheme, is refused.
func TestAPIKeys(t *testing.T) {
	const key = "k-0123456789abcdef-alice"
	e := setup(t, nil, func(_ *env, o *resourceserver.Options) {
		o.Issuers = nil
		o.APIKeys = []resourceserver.APIKey{{Principal: "alice", Key: key}, {Principal: "bob", Key: "k-0123456789abcdef-bob"}}
	})
	start := e.upstream.Load()
	e.mustPass(t, "alice's key", e.post(t, bearer(key)), start)
	before := e.upstream.Load()
	e.mustRefuse(t, "a wrong key", e.post(t, bearer(key+"x")), http.StatusUnauthorized, "invalid_token", before)
	e.mustRefuse(t, "a prefix of a key", e.post(t, bearer(key[:10])), http.StatusUnauthorized, "invalid_token", before)
	e.mustRefuse(t, "the key as DPoP", e.post(t, map[string]string{"Authorization": "DPoP " + key}), http.StatusUnauthorized, "invalid_token", before)
	if strings.Contains(e.logs.String(), key) {
		t.Error("the log holds a key")
	}
	if s := (resourceserver.APIKey{Principal: "alice", Key: key}).String(); strings.Contains(s, key) {
		t.Errorf("APIKey.String() = %q", s)
	}
}

// TestMetadata: the protected resource metadata is at the well-known path
// of the resource URL and names the resource, the issuer and the scopes;
// New refuses settings that cannot work, listing each.
func TestMetadata(t *testing.T) {
	e := setup(t, nil, nil)
	resp, err := http.Get(e.guard.MetadataURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		Scopes               []string `json:"scopes_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		t.Fatal(err)
	}
	if md.Resource != e.url || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != e.as.URL || len(md.Scopes) != 1 {
		t.Errorf("metadata %+v", md)
	}
	if want := strings.Replace(e.url, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1); e.guard.MetadataURL() != want {
		t.Errorf("MetadataURL %s, want %s", e.guard.MetadataURL(), want)
	}
	_, err = resourceserver.New(&resourceserver.Options{
		Resource: "http://gw.example.com/mcp", Issuers: []string{"http://idp.example.com"},
		Algorithms: []string{"HS256", "none"}, APIKeys: []resourceserver.APIKey{{Principal: "a", Key: "short"}},
	})
	for _, want := range []string{"Resource", "Issuers", `"HS256"`, `"none"`, "shorter than 16"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v, want it to name %s", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "short\"") {
		t.Errorf("New's error quotes a key: %v", err)
	}
}
