package oauthflow

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetchServerMetadataEndpoints: the metadata of the pinned issuer is
// refused when an endpoint the client would send a secret, a code or the
// user to is plain http off loopback, a script URL or a literal private
// address, so that no client secret or assertion crosses the network in
// the clear, nor goes to an address a server chose inside the network.
func TestFetchServerMetadataEndpoints(t *testing.T) {
	var issuer string
	endpoints := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			http.NotFound(w, r)
			return
		}
		doc := map[string]any{"issuer": issuer, "token_endpoint": issuer + "/token"}
		for k, v := range endpoints {
			doc[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer srv.Close()
	issuer = srv.URL
	ctx := context.Background()
	if meta, err := FetchServerMetadata(ctx, srv.Client(), issuer); err != nil || meta == nil {
		t.Fatalf("the control document: meta %+v, err %v", meta, err)
	}
	for _, tc := range []struct{ member, url string }{
		{"token_endpoint", "http://as.example.com/token"},
		{"token_endpoint", "https://10.0.0.7/token"},
		{"token_endpoint", "https://169.254.169.254/token"},
		{"authorization_endpoint", "javascript:alert(1)//"},
		{"authorization_endpoint", "file:///etc/passwd"},
		{"registration_endpoint", "http://as.example.com/register"},
		{"jwks_uri", "http://as.example.com/jwks"},
	} {
		endpoints = map[string]string{tc.member: tc.url}
		meta, err := FetchServerMetadata(ctx, srv.Client(), issuer)
		if err == nil || !strings.Contains(err.Error(), tc.member) {
			t.Errorf("%s %q: meta %+v, err %v; want an error naming %s", tc.member, tc.url, meta, err, tc.member)
		}
	}
}
