package resourceserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// benchGuard is a Guard for resource, trusting as, its keys fetched.
func benchGuard(b *testing.B, as *testauth.Server, resource string, verifiedTTL time.Duration) *resourceserver.Guard {
	g, err := resourceserver.New(&resourceserver.Options{
		Resource: resource, Issuers: []string{as.URL}, Scopes: []string{testauth.BaseScope}, VerifiedTTL: verifiedTTL,
		APIKeys: []resourceserver.APIKey{{Principal: "ci", Key: "k-0123456789abcdef-ci"}}, Logger: quiet(),
	})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func benchRequest(tok string, proof string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(callBody))
	if proof != "" {
		r.Header.Set("Authorization", "DPoP "+tok)
		r.Header.Set("DPoP", proof)
	} else {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return r
}

// BenchmarkCheck measures the Guard's check of one request (Guard.Check,
// in process): a JWT access token (RS256) with the issuer's keys cached,
// verified in full (signature and claims: VerifiedTTL -1) and seen
// before (its grant reused), a token bound to a DPoP key with a fresh ES256 proof, an API
// key; and, as the peer, go-sdk's auth.RequireBearerToken with a verifier
// that only looks the token up in a map (the floor of any check).
func BenchmarkCheck(b *testing.B) {
	const resource = "http://127.0.0.1/mcp"
	as := testauth.Start(b, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true, Resource: resource})
	g := benchGuard(b, as, resource, 0)
	uncached := benchGuard(b, as, resource, -1)
	tok, err := as.SignToken(map[string]any{"sub": "alice", "aud": resource, "scope": testauth.BaseScope})
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range []*resourceserver.Guard{g, uncached} {
		if _, err := g.Check(benchRequest(tok, "")); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("jwt-verify", func(b *testing.B) {
		r := benchRequest(tok, "")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := uncached.Check(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jwt-verified-before", func(b *testing.B) {
		r := benchRequest(tok, "")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Check(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jwt+dpop", func(b *testing.B) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		d, _ := oauthflow.NewDPoP(key)
		bound, _ := as.SignToken(map[string]any{"sub": "alice", "aud": resource, "scope": testauth.BaseScope, "cnf": map[string]any{"jkt": d.Thumbprint()}})
		u, _ := url.Parse(resource)
		// Proofs are made outside the timer, in batches: each is good once.
		const batch = 512
		reqs := make([]*http.Request, 0, batch)
		b.ReportAllocs()
		for b.Loop() {
			if len(reqs) == 0 {
				b.StopTimer()
				for range batch {
					p, _ := d.Proof(http.MethodPost, u, bound, "")
					reqs = append(reqs, benchRequest(bound, p))
				}
				b.StartTimer()
			}
			r := reqs[len(reqs)-1]
			reqs = reqs[:len(reqs)-1]
			if _, err := g.Check(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("apikey", func(b *testing.B) {
		r := benchRequest("k-0123456789abcdef-ci", "")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Check(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer-gosdk-map-lookup", func(b *testing.B) {
		known := map[string]*auth.TokenInfo{tok: {UserID: "alice", Scopes: []string{testauth.BaseScope}}}
		verify := func(_ context.Context, t string, _ *http.Request) (*auth.TokenInfo, error) {
			if ti, ok := known[t]; ok {
				return ti, nil
			}
			return nil, auth.ErrInvalidToken
		}
		h := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{Scopes: []string{testauth.BaseScope}, AllowMissingExpiration: true})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		r := benchRequest(tok, "")
		w := httptest.NewRecorder()
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w, r)
		}
	})
}
