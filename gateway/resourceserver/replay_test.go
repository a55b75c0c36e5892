package resourceserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

// as returns the environment of another client of the same issuer: its
// own DPoP key, and a token bound to it for sub.
func (p *proofEnv) as(sub string) *proofEnv {
	p.t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, err := oauthflow.NewDPoP(key)
	if err != nil {
		p.t.Fatal(err)
	}
	q := *p
	q.key, q.jwk = key, mustJWK(p.t, key)
	q.tok = joseSign(p.t, jose.RS256, p.rk, "r", nil, map[string]any{
		"iss": p.iss, "sub": sub, "aud": p.resource, "exp": time.Now().Unix() + 600,
		"cnf": map[string]any{"jkt": d.Thumbprint()},
	})
	return &q
}

func status(err error) int {
	var e *resourceserver.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// hammer sends n fresh proofs of p to g and returns how many were
// accepted and how many refused with 429.
func hammer(p *proofEnv, g *resourceserver.Guard, n int) (ok, limited int) {
	for range n {
		switch err := p.check(g, http.MethodPost, p.resource, p.proof(nil)); status(err) {
		case 0:
			if err != nil {
				p.t.Fatalf("a fresh proof: %v", err)
			}
			ok++
		case http.StatusTooManyRequests:
			limited++
		default:
			p.t.Fatalf("a fresh proof: %v", err)
		}
	}
	return ok, limited
}

// TestDPoPReplayPerPrincipal: a client that sends fresh proofs faster than
// the replay store keeps them for one principal is answered 429 with
// Retry-After, and only it: another principal's proofs are accepted, and
// the flooding client's old proof is still refused as a replay.
func TestDPoPReplayPerPrincipal(t *testing.T) {
	alice := newProofEnv(t)
	bob := alice.as("bob")
	g := alice.guard(func(o *resourceserver.Options) { o.MaxReplayPerPrincipal = 5 })
	first := alice.proof(nil)
	if err := alice.check(g, http.MethodPost, alice.resource, first); err != nil {
		t.Fatal(err)
	}
	if ok, limited := hammer(alice, g, 20); ok != 4 || limited != 16 {
		t.Errorf("alice's flood: %d accepted, %d refused with 429; want 4 and 16", ok, limited)
	}
	if ok, limited := hammer(bob, g, 5); ok != 5 || limited != 0 {
		t.Errorf("bob during alice's flood: %d accepted, %d refused; want 5 and 0", ok, limited)
	}
	if err := alice.check(g, http.MethodPost, alice.resource, first); status(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), "replayed") {
		t.Errorf("alice's first proof again: %v, want 401 replayed", err)
	}
	// Over HTTP: 429 with Retry-After.
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("a refused request reached the gateway") }))
	r := httptest.NewRequest(http.MethodPost, alice.resource, nil)
	r.Header.Set("Authorization", "DPoP "+alice.tok)
	r.Header.Set("DPoP", alice.proof(nil))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("over HTTP: %d, Retry-After %q; want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
}
