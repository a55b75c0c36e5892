package resourceserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// proofEnv is a Guard for https://gw.example.com/mcp trusting an issuer
// whose key the test holds, and a client's DPoP key with a token bound to
// it.
type proofEnv struct {
	t        testing.TB
	resource string
	iss      string
	rk       *rsa.PrivateKey
	key      *ecdsa.PrivateKey
	jwk      map[string]any
	tok      string
}

func newProofEnv(t testing.TB) *proofEnv {
	t.Helper()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ks := startKeyServer(t, jose.JSONWebKey{Key: &rk.PublicKey, KeyID: "r", Use: "sig"})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, err := oauthflow.NewDPoP(key)
	if err != nil {
		t.Fatal(err)
	}
	p := &proofEnv{t: t, resource: "https://gw.example.com/mcp", iss: ks.srv.URL, rk: rk, key: key, jwk: mustJWK(t, key)}
	p.tok = joseSign(t, jose.RS256, rk, "r", nil, map[string]any{
		"iss": p.iss, "sub": "alice", "aud": p.resource, "exp": time.Now().Unix() + 600,
		"cnf": map[string]any{"jkt": d.Thumbprint()},
	})
	return p
}

// guard is a Guard of the environment's issuer with opts adjusted.
func (p *proofEnv) guard(adjust func(*resourceserver.Options)) *resourceserver.Guard {
	o := &resourceserver.Options{Resource: p.resource, Issuers: []string{p.iss}, JWKSURL: p.iss + "/jwks", Logger: quiet()}
	if adjust != nil {
		adjust(o)
	}
	g, err := resourceserver.New(o)
	if err != nil {
		p.t.Fatal(err)
	}
	return g
}

// proof is a DPoP proof for the bound token with claims changed by over
// (a nil value leaves a claim out).
func (p *proofEnv) proof(over map[string]any) string {
	sum := sha256.Sum256([]byte(p.tok))
	c := map[string]any{"jti": rand.Text(), "htm": "POST", "htu": p.resource, "iat": time.Now().Unix(), "ath": b64(sum[:])}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return sign(p.t, p.key, map[string]any{"typ": "dpop+jwt", "jwk": p.jwk}, c)
}

// check runs g.Check on a request with method to url carrying the bound
// token and proof.
func (p *proofEnv) check(g *resourceserver.Guard, method, url, proof string) error {
	r := httptest.NewRequest(method, url, nil)
	r.Header.Set("Authorization", "DPoP "+p.tok)
	r.Header.Set("DPoP", proof)
	_, err := g.Check(r)
	return err
}

// TestDPoPHTUVariants: a proof's htu is the request's URL up to what
// RFC 9449 says to ignore (query, fragment) and RFC 3986's normalization
// (case of scheme and host, the default port); any other difference (path
// case, a trailing slash, a path prefix or suffix, another scheme, port or
// host) and an htm in another case are refused.
func TestDPoPHTUVariants(t *testing.T) {
	p := newProofEnv(t)
	g := p.guard(nil)
	pass := map[string]string{
		"exact":                "https://gw.example.com/mcp",
		"with a query":         "https://gw.example.com/mcp?a=1",
		"with a fragment":      "https://gw.example.com/mcp#f",
		"scheme and host case": "HTTPS://GW.Example.COM/mcp",
		"the default port":     "https://gw.example.com:443/mcp",
	}
	for name, htu := range pass {
		if err := p.check(g, http.MethodPost, p.resource, p.proof(map[string]any{"htu": htu})); err != nil {
			t.Errorf("%s (%s): %v", name, htu, err)
		}
	}
	type variant struct{ method, url, htm, htu string }
	refuse := map[string]variant{
		"path case":             {"POST", p.resource, "POST", "https://gw.example.com/MCP"},
		"trailing slash":        {"POST", p.resource, "POST", "https://gw.example.com/mcp/"},
		"request trailing /":    {"POST", p.resource + "/", "POST", "https://gw.example.com/mcp"},
		"path prefix":           {"POST", p.resource + "/tools", "POST", "https://gw.example.com/mcp"},
		"path longer":           {"POST", p.resource, "POST", "https://gw.example.com/mcp/tools"},
		"another scheme":        {"POST", p.resource, "POST", "http://gw.example.com/mcp"},
		"another port":          {"POST", p.resource, "POST", "https://gw.example.com:8443/mcp"},
		"another host":          {"POST", p.resource, "POST", "https://gw.example.com.evil.example/mcp"},
		"the Host header's":     {"POST", "https://evil.example/mcp", "POST", "https://evil.example/mcp"},
		"htm lower case":        {"POST", p.resource, "post", p.resource},
		"htm of another method": {"DELETE", p.resource, "POST", p.resource},
		"a relative htu":        {"POST", p.resource, "POST", "/mcp"},
	}
	for name, v := range refuse {
		err := p.check(g, v.method, v.url, p.proof(map[string]any{"htm": v.htm, "htu": v.htu}))
		var e *resourceserver.Error
		if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Code != "invalid_dpop_proof" {
			t.Errorf("%s: %v, want 401 invalid_dpop_proof", name, err)
		}
	}
}

// TestDPoPNonceReplicas: replicas with the same DPoPNonceKey accept each
// other's nonces, a replica with another key refuses them (use_dpop_nonce),
// and so does one for a made-up nonce.
func TestDPoPNonceReplicas(t *testing.T) {
	p := newProofEnv(t)
	shared := []byte(strings.Repeat("k", 32))
	a := p.guard(func(o *resourceserver.Options) { o.DPoPNonce, o.DPoPNonceKey = true, shared })
	b := p.guard(func(o *resourceserver.Options) { o.DPoPNonce, o.DPoPNonceKey = true, shared })
	c := p.guard(func(o *resourceserver.Options) { o.DPoPNonce = true })

	// The nonce replica a gives, as a client gets it: the challenge's DPoP-Nonce.
	r := httptest.NewRequest(http.MethodPost, p.resource, nil)
	r.Header.Set("Authorization", "DPoP "+p.tok)
	r.Header.Set("DPoP", p.proof(nil))
	w := httptest.NewRecorder()
	a.Handler(http.NotFoundHandler()).ServeHTTP(w, r)
	nonce := w.Header().Get("DPoP-Nonce")
	if w.Code != http.StatusUnauthorized || nonce == "" || !strings.Contains(strings.Join(w.Header().Values("WWW-Authenticate"), " "), "use_dpop_nonce") {
		t.Fatalf("a proof without a nonce: %d, nonce %q, challenge %q", w.Code, nonce, w.Header().Values("WWW-Authenticate"))
	}
	if err := p.check(b, http.MethodPost, p.resource, p.proof(map[string]any{"nonce": nonce})); err != nil {
		t.Errorf("replica b refused replica a's nonce: %v", err)
	}
	for name, n := range map[string]string{"another key's nonce": nonce, "a made-up nonce": "AAAAAAAAAAA" + nonce[11:]} {
		err := p.check(c, http.MethodPost, p.resource, p.proof(map[string]any{"nonce": n}))
		var e *resourceserver.Error
		if !errors.As(err, &e) || e.Code != "use_dpop_nonce" {
			t.Errorf("%s: %v, want use_dpop_nonce", name, err)
		}
	}
}

// TestDPoPReplayCacheFull: an attacker who fills the replay cache with
// fresh proofs does not get an old proof accepted again: once the cache is
// full, proofs are refused (429), and a replay is refused as one.
func TestDPoPReplayCacheFull(t *testing.T) {
	p := newProofEnv(t)
	g := p.guard(func(o *resourceserver.Options) { o.MaxReplayEntries = 4 })
	first := p.proof(nil)
	if err := p.check(g, http.MethodPost, p.resource, first); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		err := p.check(g, http.MethodPost, p.resource, p.proof(nil))
		var e *resourceserver.Error
		if i >= 3 && (!errors.As(err, &e) || e.Status != http.StatusTooManyRequests) {
			t.Errorf("proof %d into a full cache: %v, want 429", i+2, err)
		}
	}
	err := p.check(g, http.MethodPost, p.resource, first)
	var e *resourceserver.Error
	if !errors.As(err, &e) || e.Code != "invalid_dpop_proof" || !strings.Contains(e.Reason, "replayed") {
		t.Errorf("the first proof replayed after the flood: %v", err)
	}
}
