package resourceserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
)

// keyServer is an authorization server whose keys (its JWKS) and
// metadata the test sets: a broken or malicious one.
type keyServer struct {
	srv  *httptest.Server
	hits atomic.Int64

	mu       sync.Mutex
	keys     []jose.JSONWebKey
	metadata map[string]any
}

func startKeyServer(t testing.TB, keys ...jose.JSONWebKey) *keyServer {
	t.Helper()
	ks := &keyServer{keys: keys}
	ks.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ks.hits.Add(1)
		ks.mu.Lock()
		defer ks.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/jwks":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: ks.keys})
		case strings.HasPrefix(r.URL.Path, "/.well-known/") && ks.metadata != nil:
			_ = json.NewEncoder(w).Encode(ks.metadata)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ks.srv.Close)
	return ks
}

func (ks *keyServer) setKeys(keys ...jose.JSONWebKey) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.keys = keys
}

// joseSign signs claims with key and alg through go-jose, with extra
// header members.
func joseSign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, extra map[string]any, claims any) string {
	t.Helper()
	o := (&jose.SignerOptions{}).WithHeader("kid", kid)
	for k, v := range extra {
		o = o.WithHeader(jose.HeaderKey(k), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, o)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// es384WithP256 is an "ES384" JWS made with a P-256 key (SHA-384 digest,
// 32-byte r and s): a key of the wrong curve for its algorithm.
func es384WithP256(t testing.TB, key *ecdsa.PrivateKey, kid string, claims any) string {
	t.Helper()
	in := b64json(t, map[string]any{"alg": "ES384", "kid": kid}) + "." + b64json(t, claims)
	d := sha512.Sum384([]byte(in))
	r, s, err := ecdsa.Sign(rand.Reader, key, d[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return in + "." + b64(sig)
}

// checkAs runs g.Check on a POST to resource with tok as a bearer token.
func checkAs(g *resourceserver.Guard, resource, tok string) (string, error) {
	r := httptest.NewRequest(http.MethodPost, resource, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	ti, err := g.Check(r)
	if err != nil {
		return "", err
	}
	return ti.UserID, nil
}

// TestKeyConfusion plays an authorization server whose JWKS holds an RSA
// key meant for RS256 only, an EC P-256 key and a symmetric key, and an
// attacker who knows all of it but the private keys: a token whose
// algorithm is not its key's (RS256 key used for PS256, the P-256 key
// for ES384, HS256 with the shared secret), an unknown critical header,
// an SQL-ish kid, a huge token, and claims that are almost right
// (audience of a prefix, with a trailing slash or another case, issuer
// with a trailing slash, exp as a string or out of range) are refused
// with 401 invalid_token; the right ones pass.
func TestKeyConfusion(t *testing.T) {
	const resource = "https://gw.example.com/mcp"
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	secret := []byte("a-shared-secret-of-32-bytes-long")
	ks := startKeyServer(t,
		jose.JSONWebKey{Key: &rk.PublicKey, KeyID: "r", Algorithm: "RS256", Use: "sig"},
		jose.JSONWebKey{Key: &ek.PublicKey, KeyID: "e", Use: "sig"},
		jose.JSONWebKey{Key: secret, KeyID: "s", Algorithm: "HS256"},
	)
	iss := ks.srv.URL
	g, err := resourceserver.New(&resourceserver.Options{
		Resource: resource, Issuers: []string{iss}, JWKSURL: iss + "/jwks", Logger: quiet(),
		Algorithms: []string{"RS256", "PS256", "ES256", "ES384"},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	claims := func(over map[string]any) map[string]any {
		c := map[string]any{"iss": iss, "sub": "mallory", "aud": resource, "exp": now + 600, "iat": now}
		for k, v := range over {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	rs := func(over map[string]any) string { return joseSign(t, jose.RS256, rk, "r", nil, claims(over)) }
	good := map[string]string{
		"RS256 by the RSA key":        rs(nil),
		"ES256 by the EC key":         joseSign(t, jose.ES256, ek, "e", nil, claims(nil)),
		"aud a list naming us":        rs(map[string]any{"aud": []string{"https://other.example.com", resource}}),
		"exp with a fraction":         rs(map[string]any{"exp": float64(now) + 600.5}),
		"a sub with # in it":          rs(map[string]any{"sub": "x#y"}),
		"no kid, the RSA key matches": joseSign(t, jose.RS256, rk, "", nil, claims(nil)),
	}
	for name, tok := range good {
		if _, err := checkAs(g, resource, tok); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
	hs := func(key []byte, kid string) string {
		return hs256(t, map[string]any{"alg": "HS256", "kid": kid}, claims(nil), key)
	}
	bad := map[string]string{
		"PS256 by the RS256-only key":    joseSign(t, jose.PS256, rk, "r", nil, claims(nil)),
		"ES384 by the P-256 key":         es384WithP256(t, ek, "e", claims(nil)),
		"HS256 with the JWKS secret":     hs(secret, "s"),
		"HS256 with the secret, RSA kid": hs(secret, "r"),
		"an unknown critical header":     joseSign(t, jose.RS256, rk, "r", map[string]any{"crit": []string{"x-must"}, "x-must": true}, claims(nil)),
		"an SQL-ish kid":                 joseSign(t, jose.RS256, rk, "' OR '1'='1", nil, claims(nil)),
		"a huge token":                   rs(map[string]any{"pad": strings.Repeat("x", 20<<10)}),
		"aud the origin only":            rs(map[string]any{"aud": "https://gw.example.com"}),
		"aud with a trailing slash":      rs(map[string]any{"aud": resource + "/"}),
		"aud in another case":            rs(map[string]any{"aud": strings.ToUpper(resource)}),
		"aud a longer path":              rs(map[string]any{"aud": resource + "/x"}),
		"aud a list without us":          rs(map[string]any{"aud": []string{"https://other.example.com", resource + "x"}}),
		"iss with a trailing slash":      rs(map[string]any{"iss": iss + "/"}),
		"exp a string":                   rs(map[string]any{"exp": "9999999999"}),
		"exp out of range":               rs(map[string]any{"exp": 1e300}),
		"nbf in the future":              rs(map[string]any{"nbf": now + 3600}),
		"iat far in the future":          rs(map[string]any{"iat": now + 3600}),
	}
	r := httptest.NewRequest(http.MethodPost, resource, nil)
	r.Header.Add("Authorization", "Bearer "+good["RS256 by the RSA key"])
	r.Header.Add("Authorization", "Bearer "+bad["aud the origin only"])
	var e *resourceserver.Error
	if _, err := g.Check(r); !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		t.Errorf("two Authorization headers: %v, want 400", err)
	}
	for name, tok := range bad {
		p, err := checkAs(g, resource, tok)
		if err == nil {
			t.Errorf("%s: accepted as %q", name, p)
		} else if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Code != "invalid_token" {
			t.Errorf("%s: %v, want 401 invalid_token", name, err)
		}
	}
}

// TestIssuerMetadataOfAnother: an issuer whose metadata names another
// issuer (a mix-up, or a tenant answering for another) gives no keys: its
// tokens get 503, however they are signed.
func TestIssuerMetadataOfAnother(t *testing.T) {
	const resource = "https://gw.example.com/mcp"
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ks := startKeyServer(t, jose.JSONWebKey{Key: &rk.PublicKey, KeyID: "r", Use: "sig"})
	ks.metadata = map[string]any{"issuer": "https://another.example.com", "jwks_uri": ks.srv.URL + "/jwks"}
	g, err := resourceserver.New(&resourceserver.Options{Resource: resource, Issuers: []string{ks.srv.URL}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	tok := joseSign(t, jose.RS256, rk, "r", nil, map[string]any{"iss": ks.srv.URL, "sub": "a", "aud": resource, "exp": time.Now().Unix() + 60})
	p, err := checkAs(g, resource, tok)
	var e *resourceserver.Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable {
		t.Errorf("a token of an issuer whose metadata names another: %q, %v; want 503", p, err)
	}
}

// TestJWKSKeyReplaced: an authorization server replaces the key behind a
// kid mid-flight; once the Guard has fetched the new set, a token of the
// old key (same kid) is refused, with the verified-token cache on.
func TestJWKSKeyReplaced(t *testing.T) {
	const resource = "https://gw.example.com/mcp"
	k1, _ := rsa.GenerateKey(rand.Reader, 2048)
	k2, _ := rsa.GenerateKey(rand.Reader, 2048)
	ks := startKeyServer(t, jose.JSONWebKey{Key: &k1.PublicKey, KeyID: "k", Use: "sig"})
	iss := ks.srv.URL
	g, err := resourceserver.New(&resourceserver.Options{
		Resource: resource, Issuers: []string{iss}, JWKSURL: iss + "/jwks", Logger: quiet(),
		JWKSMinRefresh: time.Millisecond, JWKSMaxAge: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]any{"iss": iss, "sub": "alice", "aud": resource, "exp": time.Now().Unix() + 600}
	old := joseSign(t, jose.RS256, k1, "k", nil, c)
	if _, err := checkAs(g, resource, old); err != nil {
		t.Fatalf("the first key's token: %v", err)
	}
	ks.setKeys(jose.JSONWebKey{Key: &k2.PublicKey, KeyID: "k", Use: "sig"})
	time.Sleep(5 * time.Millisecond) // past JWKSMaxAge
	if _, err := checkAs(g, resource, joseSign(t, jose.RS256, k2, "k", nil, c)); err != nil {
		t.Fatalf("the new key's token: %v", err)
	}
	if p, err := checkAs(g, resource, old); err == nil {
		t.Errorf("a token of the replaced key accepted as %q", p)
	}
}

// recordingTransport records the URLs the Guard asks for and answers
// none that is not on a loopback host (the tests use no other network).
type recordingTransport struct {
	mu   sync.Mutex
	urls []string
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.urls = append(rt.urls, r.URL.String())
	rt.mu.Unlock()
	if h := r.URL.Hostname(); h != "127.0.0.1" && h != "localhost" {
		return nil, errors.New("not a loopback host")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (rt *recordingTransport) asked(prefix string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, u := range rt.urls {
		if strings.HasPrefix(u, prefix) {
			return true
		}
	}
	return false
}

// TestPlaintextKeysAndIntrospection plays the network between the gateway
// and its authorization server: keys fetched over http from a host that is
// not loopback could be the network's own (any token forged), and an
// introspection endpoint over http would carry the gateway's client
// secret and the users' tokens in the clear. New refuses both as settings,
// and a jwks_uri over http in an issuer's metadata is never fetched.
func TestPlaintextKeysAndIntrospection(t *testing.T) {
	_, err := resourceserver.New(&resourceserver.Options{
		Resource: "https://gw.example.com/mcp", Issuers: []string{"https://idp.example.com"},
		JWKSURL: "http://idp.example.com/jwks",
	})
	if err == nil || !strings.Contains(err.Error(), "JWKSURL") {
		t.Errorf("New with an http JWKSURL: %v", err)
	}
	_, err = resourceserver.New(&resourceserver.Options{
		Resource: "https://gw.example.com/mcp", Issuers: []string{"https://idp.example.com"},
		JWKSURL: "http://127.idp.example.com/jwks", // a DNS name, not a loopback address
	})
	if err == nil || !strings.Contains(err.Error(), "JWKSURL") {
		t.Errorf("New with an http JWKSURL on a name that starts with 127.: %v", err)
	}
	_, err = resourceserver.New(&resourceserver.Options{
		Resource:      "https://gw.example.com/mcp",
		Introspection: &resourceserver.Introspection{URL: "http://idp.example.com/introspect", ClientID: "gw", ClientSecret: "s"},
	})
	if err == nil || !strings.Contains(err.Error(), "Introspection") {
		t.Errorf("New with an http introspection URL: %v", err)
	}

	ks := startKeyServer(t)
	ks.metadata = map[string]any{"issuer": ks.srv.URL, "jwks_uri": "http://idp.example.com/jwks"}
	rt := &recordingTransport{}
	var logs syncBuffer
	g, err := resourceserver.New(&resourceserver.Options{
		Resource: "https://gw.example.com/mcp", Issuers: []string{ks.srv.URL}, Timeout: 2 * time.Second,
		HTTPClient: &http.Client{Transport: rt}, Logger: slogTo(&logs),
	})
	if err != nil {
		t.Fatal(err)
	}
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	tok := joseSign(t, jose.RS256, rk, "k", nil, map[string]any{"iss": ks.srv.URL, "sub": "a", "aud": "https://gw.example.com/mcp", "exp": time.Now().Unix() + 60})
	if p, err := checkAs(g, "https://gw.example.com/mcp", tok); err == nil {
		t.Fatalf("accepted as %q", p)
	}
	if rt.asked("http://idp.example.com") {
		t.Error("the Guard fetched keys over http from a host that is not loopback")
	}
	if !strings.Contains(logs.String(), "jwks_uri") {
		t.Errorf("the log does not say why the keys were not fetched: %s", logs.String())
	}
}

// slogTo is a logger writing text lines, every level, to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
