package oauthflow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// TestRedirectURLPortZero: a redirect URL with port 0 (or no valid port)
// is refused with an error that says why and what to do instead.
func TestRedirectURLPortZero(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:0/callback", "http://localhost:0/cb", "http://127.0.0.1:70000/cb"} {
		err := CheckRedirectURL(u)
		if err == nil || !strings.Contains(err.Error(), "cannot be registered") || !strings.Contains(err.Error(), "leave RedirectURL empty") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if err := CheckRedirectURL("http://127.0.0.1:8976/callback"); err != nil {
		t.Errorf("a fixed port: %v", err)
	}
}

// TestPublicOnlyRefusesPrivateAddresses: the client for authorization
// servers refuses to dial private and link-local addresses (the cloud
// metadata endpoint among them) unless the user named the host; loopback
// stays allowed.
func TestPublicOnlyRefusesPrivateAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	hc := PublicOnly(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://10.255.255.1:9/", "http://[fd00::1]:9/", "http://100.64.0.1:9/", "http://0.0.0.0:9/"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: dialled", u)
			continue
		}
		if !strings.Contains(err.Error(), "non-public address") {
			t.Errorf("%s: %v (want a refusal naming a non-public address)", u, err)
		}
	}
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatalf("loopback: %v", err)
	}
	resp.Body.Close()

	// A host the user named is dialled whatever its address: a 10.x
	// address that is not there fails to connect, not by refusal.
	named := PublicOnly(nil, "10.255.255.1")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://10.255.255.1:9/", nil)
	ctx2, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if resp, err := named.Do(req.WithContext(ctx2)); err == nil {
		resp.Body.Close()
	} else if strings.Contains(err.Error(), "non-public address") {
		t.Errorf("a named host was refused: %v", err)
	}

	// A transport that dials on its own is its owner's business.
	own := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}
	if PublicOnly(own) != own {
		t.Errorf("a client that dials on its own was changed")
	}
	for _, ip := range []string{"127.0.0.1", "::1", "8.8.8.8"} {
		if PrivateAddr(netip.MustParseAddr(ip)) {
			t.Errorf("%s counted as private", ip)
		}
	}
}

// TestFetchServerMetadataNoPKCE: the grants read the metadata of an
// authorization server that advertises no PKCE (only the authorization
// code grant uses it); a document naming another issuer is refused.
func TestFetchServerMetadataNoPKCE(t *testing.T) {
	var issuer string
	claim := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			http.NotFound(w, r)
			return
		}
		iss := issuer
		if claim != "" {
			iss = claim
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "token_endpoint": issuer + "/token", "grant_types_supported": []string{"client_credentials"}})
	}))
	defer srv.Close()
	issuer = srv.URL
	ctx := context.Background()
	meta, err := FetchServerMetadata(ctx, srv.Client(), issuer)
	if err != nil || meta == nil || meta.TokenEndpoint != issuer+"/token" {
		t.Fatalf("meta %+v, err %v", meta, err)
	}
	claim = "https://elsewhere.example"
	if _, err := FetchServerMetadata(ctx, srv.Client(), issuer); err == nil || !strings.Contains(err.Error(), "names the issuer") {
		t.Errorf("another issuer: %v", err)
	}
	if _, err := FetchServerMetadata(ctx, srv.Client(), "http://as.example.com"); err == nil {
		t.Errorf("an http issuer off loopback was accepted")
	}
}

// TestCheckAudience: an assertion goes only to an authorization server
// its aud names; an ID-JAG only for the resource it names.
func TestCheckAudience(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sign := func(claims map[string]any) string {
		s, err := SignJWT(key, nil, claims)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tg := Target{AS: &oauthex.AuthServerMeta{Issuer: "https://as.example", TokenEndpoint: "https://as.example/oauth/token"}, Resource: "https://mcp.example/mcp"}
	for _, tc := range []struct {
		aud any
		ok  bool
	}{
		{"https://as.example", true},
		{"https://as.example/", true},
		{[]any{"x", "https://as.example/oauth/token"}, true},
		{"https://evil.example", false},
		{nil, false},
		{[]any{"https://evil.example"}, false},
	} {
		err := CheckAudience(sign(map[string]any{"aud": tc.aud, "sub": "w"}), tg)
		if (err == nil) != tc.ok {
			t.Errorf("aud %v: %v", tc.aud, err)
		}
	}
	if err := CheckAudience("opaque-token", tg); err == nil {
		t.Errorf("an opaque assertion was accepted")
	}
	if err := checkIDJAG(sign(map[string]any{"aud": "https://as.example", "resource": "https://other.example/mcp"}), tg); err == nil {
		t.Errorf("an ID-JAG for another resource was accepted")
	}
	if err := checkIDJAG(sign(map[string]any{"aud": "https://as.example", "resource": tg.Resource}), tg); err != nil {
		t.Errorf("a good ID-JAG: %v", err)
	}
}
