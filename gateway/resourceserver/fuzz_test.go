package resourceserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// FuzzCheck feeds arbitrary Authorization and DPoP headers to a Guard
// that trusts a real authorization server: it never panics, never
// answers other than 400, 401 or 403, and accepts only what the
// authorization server signed (the seeds it was given unchanged).
func FuzzCheck(f *testing.F) {
	const resource = "http://127.0.0.1/mcp"
	as := testauth.Start(f, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true, Resource: resource})
	g, err := resourceserver.New(&resourceserver.Options{
		Resource: resource, Issuers: []string{as.URL}, Scopes: []string{testauth.BaseScope}, Logger: quiet(),
		APIKeys: []resourceserver.APIKey{{Principal: "ci", Key: "k-0123456789abcdef-ci"}},
	})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := as.SignToken(map[string]any{"sub": "alice", "aud": resource, "scope": testauth.BaseScope})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, _ := oauthflow.NewDPoP(key)
	bound, _ := as.SignToken(map[string]any{"sub": "alice", "aud": resource, "scope": testauth.BaseScope, "cnf": map[string]any{"jkt": d.Thumbprint()}})
	u, _ := url.Parse(resource)
	proof, _ := d.Proof(http.MethodPost, u, bound, "")
	genuine := map[string]bool{"Bearer " + good: true, "Bearer k-0123456789abcdef-ci": true}

	f.Add("Bearer "+good, "")
	f.Add("DPoP "+bound, proof)
	f.Add("Bearer "+bound, proof)
	f.Add("Bearer k-0123456789abcdef-ci", "")
	f.Add("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "")
	f.Add("Bearer a.b.c", "a.b.c")
	f.Add("DPoP "+good, proof)
	f.Add("bearer  "+good+" ", "")
	f.Add("Bearer "+strings.Replace(good, ".", "..", 1), "")
	f.Fuzz(func(t *testing.T, authz, dpop string) {
		r := httptest.NewRequest(http.MethodPost, resource, nil)
		r.Header.Set("Authorization", authz)
		if dpop != "" {
			r.Header.Set("DPoP", dpop)
		}
		ti, err := g.Check(r)
		if err == nil {
			if !genuine[strings.TrimSpace(authz)] && !strings.Contains(authz, bound) && !strings.Contains(authz, good) {
				t.Fatalf("accepted %q", authz)
			}
			if ti == nil || ti.UserID == "" {
				t.Fatalf("accepted without a principal: %+v", ti)
			}
			return
		}
		var e *resourceserver.Error
		if !asError(err, &e) || (e.Status != 400 && e.Status != 401 && e.Status != 403) {
			t.Fatalf("error %v", err)
		}
	})
}

func asError(err error, e **resourceserver.Error) bool { return errors.As(err, e) }
