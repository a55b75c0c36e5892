package mcpadapter_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// lockingStore is a TokenUpdater in memory, as several processes would
// share one in a database; its first loads wait for each other (see
// TestOAuthSharedRefresh).
type lockingStore struct {
	mcpadapter.TokenStore
	lock    sync.Mutex // the lock Update holds among "processes"
	mu      sync.Mutex
	waiting int
	all     chan struct{}
	updates int
}

func (s *lockingStore) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	t, err := s.TokenStore.Load(ctx, key)
	s.mu.Lock()
	if s.waiting > 0 {
		if s.waiting--; s.waiting == 0 {
			close(s.all)
		}
	}
	s.mu.Unlock()
	select {
	case <-s.all:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return t, err
}

var _ mcpadapter.TokenUpdater = (*lockingStore)(nil)

func (s *lockingStore) Update(ctx context.Context, key string, fn func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error)) error {
	s.lock.Lock()
	defer s.lock.Unlock()
	s.mu.Lock()
	s.updates++
	s.mu.Unlock()
	cur, err := s.TokenStore.Load(ctx, key)
	if err != nil {
		return err
	}
	next, err := fn(ctx, cur)
	if err != nil || next == nil {
		return err
	}
	return s.TokenStore.Save(ctx, key, next)
}

// TestOAuthSharedRefresh: two clients (two replicas) hold the same
// expired token and need it at once. With a TokenUpdater, one refreshes
// and the other takes what it stored: the rotated refresh token is used
// once and nobody signs in again. (With a plain TokenStore the second
// refresh would use the spent refresh token and the user would be asked.)
func TestOAuthSharedRefresh(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	mem := mcpadapter.NewMemoryTokenStore()
	user := &browser{}
	if _, err := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: mem}, nil).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := mem.Load(ctx, as.MCPURL)
	st.Token.Expiry = time.Now().Add(-time.Minute)
	if err := mem.Save(ctx, as.MCPURL, st); err != nil {
		t.Fatal(err)
	}
	shared := &lockingStore{TokenStore: mem, waiting: 2, all: make(chan struct{})}
	errs := make(chan error, 2)
	for range 2 {
		a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: shared}, nil)
		go func() { _, err := a.Tools(ctx); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if c := as.Counts(); c.Refreshes != 1 || c.Authorizations != 1 || user.count() != 1 || shared.updates != 2 {
		t.Errorf("counts %+v, user sent %d times, %d updates; want 1 refresh, no second sign-in, 2 updates", c, user.count(), shared.updates)
	}
	got, _ := mem.Load(ctx, as.MCPURL)
	if got.Token.AccessToken == st.Token.AccessToken || got.Token.RefreshToken == st.Token.RefreshToken {
		t.Error("the refreshed token was not stored")
	}

	// A refresh token the server no longer takes: the user signs in
	// again, once, as with any store.
	got.Token.Expiry = time.Now().Add(-time.Minute)
	got.Token.RefreshToken = "revoked"
	if err := mem.Save(ctx, as.MCPURL, got); err != nil {
		t.Fatal(err)
	}
	dead := &lockingStore{TokenStore: mem, all: make(chan struct{})}
	close(dead.all)
	if _, err := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, Store: dead}, nil).Tools(ctx); err != nil {
		t.Fatalf("with a dead refresh token: %v", err)
	}
	if user.count() != 2 {
		t.Errorf("user sent %d times, want 2", user.count())
	}
}
