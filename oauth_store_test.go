package mcpadapter_test

import (
	"context"
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
// process with another key cannot use it: it refreshes it with its own
// key's proof (the authorization server binds the new token to that key),
// still without asking the user.
func TestDPoPTokenAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), DPoP: true})
	path := filepath.Join(t.TempDir(), "tokens.json")
	key, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	user := &browser{}
	if _, err := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewFileTokenStore(path), DPoPKey: key}, nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := mcpadapter.NewFileTokenStore(path).Load(ctx, as.MCPURL)
	if err != nil || st == nil || st.DPoPThumbprint == "" || !strings.EqualFold(st.Token.TokenType, "DPoP") {
		t.Fatalf("stored: %v %v, want a DPoP token with its key's thumbprint", st, err)
	}

	// A restart: same key, same file.
	from := len(as.AuthorizationHeaders())
	if _, err := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewFileTokenStore(path), DPoPKey: key}, nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	dpopSince(t, as, from)
	if c := as.Counts(); user.count() != 1 || c.Authorizations != 1 || c.Refreshes != 0 {
		t.Errorf("after a restart: user sent %d times, counts %+v; want 1 sign-in, no refresh", user.count(), c)
	}

	// Another key: the stored token is refreshed with this key's proof.
	other, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	from = len(as.AuthorizationHeaders())
	if _, err := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewFileTokenStore(path), DPoPKey: other}, nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	dpopSince(t, as, from)
	if c := as.Counts(); user.count() != 1 || c.Authorizations != 1 || c.Refreshes != 1 {
		t.Errorf("with another key: user sent %d times, counts %+v; want 1 sign-in, 1 refresh", user.count(), c)
	}
	if now, _ := mcpadapter.NewFileTokenStore(path).Load(ctx, as.MCPURL); now == nil || now.DPoPThumbprint == st.DPoPThumbprint || now.DPoPThumbprint == "" {
		t.Errorf("after the refresh with another key, the stored thumbprint is %v", now)
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
