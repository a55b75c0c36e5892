package oauthflow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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
