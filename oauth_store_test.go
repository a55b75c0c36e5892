package mcpadapter_test

import (
	"context"
	"crypto"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// expireStored makes the token stored for url expired, as an hour later.
func expireStored(t *testing.T, ctx context.Context, s mcpadapter.TokenStore, url string) *mcpadapter.StoredToken {
	t.Helper()
	st, err := s.Load(ctx, url)
	if err != nil || st == nil {
		t.Fatalf("stored token: %v %v", st, err)
	}
	st.Token.Expiry = time.Now().Add(-time.Minute)
	if err := s.Save(ctx, url, st); err != nil {
		t.Fatal(err)
	}
	return st
}

// dpopSince checks that every Authorization header the MCP endpoint got
// from index from on is a DPoP one.
func dpopSince(t *testing.T, as *testauth.Server, from int) {
	t.Helper()
	hs := as.AuthorizationHeaders()
	if len(hs) <= from {
		t.Fatalf("no request reached the MCP endpoint after %d", from)
	}
	for i, h := range hs[from:] {
		if !strings.HasPrefix(h, "DPoP ") {
			t.Errorf("request %d sent %q, want a DPoP token", from+i, strings.SplitN(h, " ", 2)[0])
		}
	}
}

// TestDPoPTokenAfterRestart: a DPoP-bound token kept in a file is sent as
// DPoP by the next process with the same key, without a new sign-in. A
// process with another key cannot use it. The authorization server binds
// a public client's refresh token to the key (RFC 9449, section 5), so
// that process signs in again without first sending a refresh bound to
// fail; a confidential client's refresh token is bound to its secret, so
// that process refreshes it with its own key's proof.
func TestDPoPTokenAfterRestart(t *testing.T) {
	t.Parallel()
	for _, confidential := range []bool{false, true} {
		t.Run(map[bool]string{false: "public", true: "confidential"}[confidential], func(t *testing.T) {
			t.Parallel()
			testDPoPTokenAfterRestart(t, confidential)
		})
	}
}

func testDPoPTokenAfterRestart(t *testing.T, confidential bool) {
	ctx := testCtx(t)
	opts := testauth.Options{MCP: testserver.New(testserver.Options{}), DPoP: true}
	if confidential {
		opts.ClientID, opts.ClientSecret = "svc", "svc-secret"
	}
	as := testauth.Start(t, opts)
	path := filepath.Join(t.TempDir(), "tokens.json")
	user := &browser{}
	withKey := func(key crypto.Signer) *mcpadapter.OAuth {
		o := &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewFileTokenStore(path), DPoPKey: key}
		if confidential {
			o.ClientID, o.ClientSecret, o.Issuer = opts.ClientID, opts.ClientSecret, as.URL
		}
		return o
	}
	key, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oauthClient(t, as.MCPURL, withKey(key), nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := mcpadapter.NewFileTokenStore(path).Load(ctx, as.MCPURL)
	if err != nil || st == nil || st.DPoPThumbprint == "" || !strings.EqualFold(st.Token.TokenType, "DPoP") {
		t.Fatalf("stored: %v %v, want a DPoP token with its key's thumbprint", st, err)
	}

	// A restart: same key, same file.
	from := len(as.AuthorizationHeaders())
	if _, err := oauthClient(t, as.MCPURL, withKey(key), nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	dpopSince(t, as, from)
	if c := as.Counts(); user.count() != 1 || c.Authorizations != 1 || c.Refreshes != 0 {
		t.Errorf("after a restart: user sent %d times, counts %+v; want 1 sign-in, no refresh", user.count(), c)
	}

	// Another key.
	other, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	from = len(as.AuthorizationHeaders())
	if _, err := oauthClient(t, as.MCPURL, withKey(other), nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if confidential {
		dpopSince(t, as, from)
	} else {
		// No token to send until the sign-in; then DPoP.
		hs := as.AuthorizationHeaders()[from:]
		for len(hs) > 0 && hs[0] == "" {
			hs = hs[1:]
		}
		dpopSince(t, as, len(as.AuthorizationHeaders())-len(hs))
	}
	c := as.Counts()
	if c.WrongKeyRefreshes != 0 {
		t.Errorf("%d refreshes of the token with another key's proof: refused by the server, want none sent", c.WrongKeyRefreshes)
	}
	switch {
	case confidential && (user.count() != 1 || c.Authorizations != 1 || c.Refreshes != 1):
		t.Errorf("confidential client, another key: user sent %d times, counts %+v; want 1 sign-in, 1 refresh", user.count(), c)
	case !confidential && (user.count() != 2 || c.Authorizations != 2 || c.Refreshes != 0):
		t.Errorf("public client, another key: user sent %d times, counts %+v; want a second sign-in and no refresh", user.count(), c)
	}
	if now, _ := mcpadapter.NewFileTokenStore(path).Load(ctx, as.MCPURL); now == nil || now.DPoPThumbprint == st.DPoPThumbprint || now.DPoPThumbprint == "" {
		t.Errorf("after the other key's token, the stored thumbprint is %v", now)
	}
}

// TestSharedFileRefresh: two processes (two stores on one file) hold the
// same expired token and need it at once, against an authorization
// server that rotates refresh tokens: one refreshes under the file's
// lock and the other takes the token it saved, so nobody is asked to
// sign in again. The tokens are DPoP-bound: the token taken from the file
// goes out as DPoP too.
func TestSharedFileRefresh(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), DPoP: true})
	path := filepath.Join(t.TempDir(), "tokens.json")
	key, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	user := &browser{}
	file := mcpadapter.NewFileTokenStore(path)
	if _, err := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: file, DPoPKey: key}, nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := file.(mcpadapter.TokenUpdater); !ok {
		t.Fatal("the file token store is not a TokenUpdater")
	}
	st := expireStored(t, ctx, file, as.MCPURL)
	from := len(as.AuthorizationHeaders())
	// Both load the expired token before either refreshes it.
	errs := make(chan error, 2)
	barrier := &barrierState{waiting: 2, all: make(chan struct{})}
	for range 2 {
		s := &lockingFile{TokenUpdater: mcpadapter.NewFileTokenStore(path).(mcpadapter.TokenUpdater), barrier: barrier}
		a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: s, DPoPKey: key}, nil)
		go func() { _, err := a.Tools(ctx); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if c := as.Counts(); c.Refreshes != 1 || c.Authorizations != 1 || user.count() != 1 {
		t.Errorf("counts %+v, user sent %d times; want 1 refresh and no second sign-in", c, user.count())
	}
	dpopSince(t, as, from)
	got, _ := file.Load(ctx, as.MCPURL)
	if got.Token.RefreshToken == st.Token.RefreshToken {
		t.Error("the refreshed token was not saved")
	}
}

// lockingFile is a TokenUpdater whose first loads wait for each other.
type lockingFile struct {
	mcpadapter.TokenUpdater
	barrier *barrierState
}

// barrierState is shared by the stores of one barrier.
type barrierState struct {
	mu      sync.Mutex
	waiting int
	all     chan struct{}
}

func (s *lockingFile) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	t, err := s.TokenUpdater.Load(ctx, key)
	b := s.barrier
	b.mu.Lock()
	if b.waiting > 0 {
		if b.waiting--; b.waiting == 0 {
			close(b.all)
		}
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return t, err
}
