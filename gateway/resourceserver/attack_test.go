package resourceserver_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// TestJWTAttacks plays an attacker against a gateway that trusts one
// authorization server: every forged, stolen-for-elsewhere or stale token
// is refused with 401 and an invalid_token challenge, nothing reaches the
// server behind, and no token appears in the log. A genuine token passes
// (so the refusals are the tokens' doing).
func TestJWTAttacks(t *testing.T) {
	e := setup(t, nil, nil)
	start := e.upstream.Load()
	good := e.token(t, nil)
	e.mustPass(t, "a genuine token", e.post(t, bearer(good)), start)

	kid, key := e.as.SigningKey()
	pub := key.Public().(*rsa.PublicKey)
	now := time.Now().Unix()
	claims := map[string]any{"iss": e.as.URL, "sub": "mallory", "aud": e.url, "scope": testauth.BaseScope, "iat": now, "exp": now + 3600}

	// jku/x5u/jwk headers pointing at the attacker's keys: never fetched.
	var attackerHits atomic.Int64
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attackerHits.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(attacker.Close)
	evilRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	evilEC, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	evilJWK, _ := oauthflow.PublicJWK(evilRSA)

	pubDER, _ := x509.MarshalPKIXPublicKey(pub)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})

	other := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true, Resource: e.url})
	otherTok, _ := other.SignToken(map[string]any{"sub": "alice", "aud": e.url, "scope": testauth.BaseScope})
	otherKid, otherKey := other.SigningKey()

	tampered := func() string {
		p := strings.Split(good, ".")
		p[1] = b64json(t, map[string]any{"iss": e.as.URL, "sub": "admin", "aud": e.url, "scope": testauth.BaseScope + " " + testauth.AdminScope, "exp": now + 3600})
		return strings.Join(p, ".")
	}()

	attacks := map[string]string{
		"garbage":                       "not-a-token",
		"three garbage parts":           "a.b.c",
		"alg none":                      b64json(t, map[string]any{"alg": "none", "kid": kid}) + "." + b64json(t, claims) + ".",
		"alg none with a signature":     b64json(t, map[string]any{"alg": "none", "kid": kid}) + "." + b64json(t, claims) + "." + b64([]byte("x")),
		"HS256 with the public key":     hs256(t, map[string]any{"alg": "HS256", "kid": kid, "typ": "JWT"}, claims, pubPEM),
		"HS256 with the modulus":        hs256(t, map[string]any{"alg": "HS256", "kid": kid}, claims, pub.N.Bytes()),
		"ES256 by another key, kid":     sign(t, evilEC, map[string]any{"kid": kid}, claims),
		"RS256 by another key, kid":     sign(t, evilRSA, map[string]any{"kid": kid}, claims),
		"RS256 by another key, no kid":  sign(t, evilRSA, nil, claims),
		"kid naming no key":             sign(t, evilRSA, map[string]any{"kid": "nope"}, claims),
		"kid path injection":            sign(t, evilRSA, map[string]any{"kid": "../../../../etc/passwd"}, claims),
		"kid URL":                       sign(t, evilRSA, map[string]any{"kid": attacker.URL + "/key"}, claims),
		"jku elsewhere":                 sign(t, evilRSA, map[string]any{"jku": attacker.URL + "/jwks", "kid": "evil"}, claims),
		"x5u elsewhere":                 sign(t, evilRSA, map[string]any{"x5u": attacker.URL + "/cert.pem"}, claims),
		"embedded jwk":                  sign(t, evilRSA, map[string]any{"jwk": evilJWK, "kid": kid}, claims),
		"another audience":              e.token(t, map[string]any{"aud": e.as.MCPURL}),
		"no audience":                   e.token(t, map[string]any{"aud": nil}),
		"another issuer":                otherTok,
		"another issuer's key, our iss": sign(t, otherKey, map[string]any{"kid": otherKid}, claims),
		"our key, another iss":          e.token(t, map[string]any{"iss": other.URL}),
		"expired":                       e.token(t, map[string]any{"exp": now - 120}),
		"no exp":                        e.token(t, map[string]any{"exp": nil}),
		"not yet valid":                 e.token(t, map[string]any{"nbf": now + 600}),
		"issued in the future":          e.token(t, map[string]any{"iat": now + 600}),
		"tampered payload":              tampered,
		"no subject":                    e.token(t, map[string]any{"sub": nil, "client_id": nil}),
		"a DPoP proof as the token":     sign(t, key, map[string]any{"typ": "dpop+jwt", "kid": kid, "jwk": evilJWK}, claims),
	}
	before := e.upstream.Load()
	for name, tok := range attacks {
		resp := e.post(t, bearer(tok))
		e.mustRefuse(t, name, resp, http.StatusUnauthorized, "invalid_token", before)
	}
	if n := attackerHits.Load(); n != 0 {
		t.Errorf("the gateway fetched %d URLs a token named", n)
	}
	log := e.logs.String()
	for name, tok := range attacks {
		if len(tok) > 20 && strings.Contains(log, tok) {
			t.Errorf("the log holds the token of %q", name)
		}
	}
	if strings.Contains(log, good) {
		t.Error("the log holds a genuine token")
	}
	if !strings.Contains(log, "reason=") {
		t.Errorf("the log says no reason: %s", log)
	}

	// No credential: a challenge without an error; too little scope: 403.
	e.mustRefuse(t, "no token", e.post(t, nil), http.StatusUnauthorized, "", before)
	e.mustRefuse(t, "Basic", e.post(t, map[string]string{"Authorization": "Basic YTpi"}), http.StatusUnauthorized, "", before)
	e.mustRefuse(t, "too little scope", e.post(t, bearer(e.token(t, map[string]any{"scope": "other"}))), http.StatusForbidden, "insufficient_scope", before)
	e.mustPass(t, "the genuine token again", e.post(t, bearer(good)), before)
}

// TestJWKSUnknownKidFlood: tokens naming keys nobody has make the gateway
// fetch the issuer's keys at most once per JWKSMinRefresh, however many
// come; a rotated key is fetched once and its tokens pass.
func TestJWKSUnknownKidFlood(t *testing.T) {
	e := setup(t, nil, nil)
	if resp := e.post(t, bearer(e.token(t, nil))); resp.StatusCode != http.StatusOK {
		t.Fatalf("a genuine token: %d", resp.StatusCode)
	}
	evil, _ := rsa.GenerateKey(rand.Reader, 2048)
	now := time.Now().Unix()
	before := e.upstream.Load()
	for i := range 50 {
		tok := sign(t, evil, map[string]any{"kid": "flood-" + rand.Text()}, map[string]any{"iss": e.as.URL, "sub": "x", "aud": e.url, "exp": now + 60, "n": i})
		e.mustRefuse(t, "unknown kid", e.post(t, bearer(tok)), http.StatusUnauthorized, "invalid_token", before)
	}
	if n := e.as.Counts().JWKSRequests; n > 2 {
		t.Errorf("50 unknown kids made %d JWKS requests, want at most 2 (the first fetch and one refresh)", n)
	}
}

// TestJWKSRotation: after the authorization server rotates its key (and
// drops the old one), a token of the new key passes after one fetch, and a
// token of the old key is refused.
func TestJWKSRotation(t *testing.T) {
	e := setup(t, nil, func(_ *env, o *resourceserver.Options) { o.JWKSMinRefresh = time.Millisecond })
	old := e.token(t, nil)
	start := e.upstream.Load()
	e.mustPass(t, "before rotation", e.post(t, bearer(old)), start)
	fetches := e.as.Counts().JWKSRequests
	if _, err := e.as.RotateKey(true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // past JWKSMinRefresh
	now := e.upstream.Load()
	e.mustPass(t, "the rotated key", e.post(t, bearer(e.token(t, nil))), now)
	if n := e.as.Counts().JWKSRequests - fetches; n != 1 {
		t.Errorf("%d JWKS fetches for the new key, want 1", n)
	}
	before := e.upstream.Load()
	time.Sleep(5 * time.Millisecond)
	e.mustRefuse(t, "the dropped key", e.post(t, bearer(old)), http.StatusUnauthorized, "invalid_token", before)
}

// hs256 signs header.claims with HMAC-SHA256 and secret.
func hs256(t testing.TB, header, claims map[string]any, secret []byte) string {
	in := b64json(t, header) + "." + b64json(t, claims)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(in))
	return in + "." + b64(m.Sum(nil))
}

// sign signs claims with key, its alg set by the key, with header's
// members.
func sign(t testing.TB, key crypto.Signer, header, claims map[string]any) string {
	t.Helper()
	s, err := oauthflow.SignJWT(key, header, claims)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
