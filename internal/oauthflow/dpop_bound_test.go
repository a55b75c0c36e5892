package oauthflow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestDPoPBoundTokensBounded: the access tokens recorded as bound to the
// key do not pile up (a web service's users refresh theirs every hour,
// for months): at most 1<<14 are kept, the last ones recorded among them.
func TestDPoPBoundTokensBounded(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDPoP(key)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 << 14
	for i := range n {
		d.MarkBound("token-" + strconv.Itoa(i))
	}
	d.mu.Lock()
	kept := len(d.bound)
	d.mu.Unlock()
	if kept > 1<<14 {
		t.Errorf("%d tokens recorded as bound; want at most %d", kept, 1<<14)
	}
	for i := n - 100; i < n; i++ {
		if !d.Bound("token-" + strconv.Itoa(i)) {
			t.Fatalf("token %d, among the last recorded, is no longer bound", i)
		}
	}
}

// TestWebDPoPTokenForgotten: a user's bound token the DPoP has forgotten
// (thousands of other tokens recorded since) still goes as DPoP with a
// proof, never as a bearer token the server would refuse.
func TestWebDPoPTokenForgotten(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	store := NewMemoryStore()
	w, err := NewWeb(WebConfig{ClientID: "c", Issuer: srv.URL, RedirectURL: "https://app.example/cb",
		StateKey: []byte("0123456789abcdef"), Store: store, DPoPKey: key})
	if err != nil {
		t.Fatal(err)
	}
	tok := &StoredToken{Token: &oauth2.Token{AccessToken: "at-alice", TokenType: "DPoP", Expiry: time.Now().Add(time.Hour)},
		ClientID: "c", TokenURL: srv.URL + "/token", DPoPThumbprint: w.dpop.Thumbprint()}
	if err := store.Save(ctx, TokenKey(srv.URL, ""), tok); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: w.Target(srv.URL).Transport(w.dpop.ResourceTransport(http.DefaultTransport))}
	get := func() {
		t.Helper()
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	get()
	for i := range maxBound {
		w.dpop.MarkBound("another-" + strconv.Itoa(i))
	}
	get()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d requests", len(seen))
	}
	for i, a := range seen {
		if a != "DPoP at-alice" {
			t.Errorf("request %d went with Authorization %q; want DPoP at-alice", i, a)
		}
	}
}

// TestWebBoundElsewhere: a user's token the store now holds bound to
// another replica's DPoP key (a public client: it cannot be refreshed
// with this key) makes the user sign in again on this replica too, once
// the token this replica held has expired: not an error at every request.
func TestWebBoundElsewhere(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	tokenRequests := 0
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"issuer":"` + srv.URL + `","authorization_endpoint":"` + srv.URL + `/authorize","token_endpoint":"` + srv.URL + `/token"}`))
		case "/token":
			mu.Lock()
			tokenRequests++
			mu.Unlock()
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		case "/mcp":
			if r.Header.Get("Authorization") == "" {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "sign in", http.StatusUnauthorized)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	mine, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewDPoP(theirs)
	if err != nil {
		t.Fatal(err)
	}
	store := &lockedStore{Store: NewMemoryStore()}
	w, err := NewWeb(WebConfig{ClientID: "c", Issuer: srv.URL, RedirectURL: "https://app.example/cb",
		StateKey: []byte("0123456789abcdef"), Store: store, DPoPKey: mine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	resource := srv.URL + "/mcp"
	key := TokenKey(resource, "")
	// The other replica's sign-in, stored.
	if err := store.Save(ctx, key, &StoredToken{Token: &oauth2.Token{AccessToken: "theirs", TokenType: "DPoP", RefreshToken: "rt-theirs",
		Expiry: time.Now().Add(time.Hour)}, ClientID: "c", TokenURL: srv.URL + "/token", DPoPThumbprint: other.Thumbprint()}); err != nil {
		t.Fatal(err)
	}
	// This replica's token, read before that sign-in, now expired.
	oc := &oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{TokenURL: srv.URL + "/token"}}
	old := &oauth2.Token{AccessToken: "mine", TokenType: "DPoP", RefreshToken: "rt-mine", Expiry: time.Now().Add(-time.Minute)}
	w.sources[key] = &webSource{access: "mine", ts: newSharedRefresher(store, key, oc, http.DefaultClient, w.dpop, w.log, w.bg, old, false)}

	hc := &http.Client{Transport: w.Target(resource).Transport(w.dpop.ResourceTransport(http.DefaultTransport))}
	for i := range 2 {
		resp, err := hc.Get(resource)
		if err == nil {
			_ = resp.Body.Close()
		}
		if !errors.As(err, new(*NeedSignIn)) {
			t.Fatalf("request %d: %v; want the user asked to sign in", i, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if tokenRequests != 0 {
		t.Errorf("%d token requests; want none (the stored refresh token is the other key's)", tokenRequests)
	}
}
