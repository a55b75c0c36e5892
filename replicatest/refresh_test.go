package replicatest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// barrier makes the first n Loads wait for each other, so that n clients
// hold the same stored token before any of them refreshes it. Update is
// the store's own (with hideUpdate, the store is a plain TokenStore: the
// case TokenUpdater fixes).
type barrier struct {
	mcpadapter.TokenUpdater
	mu      sync.Mutex
	waiting int
	all     chan struct{}
}

func newBarrier(s mcpadapter.TokenUpdater, n int) *barrier {
	return &barrier{TokenUpdater: s, waiting: n, all: make(chan struct{})}
}

func (b *barrier) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	t, err := b.TokenUpdater.Load(ctx, key)
	b.mu.Lock()
	if b.waiting > 0 {
		if b.waiting--; b.waiting == 0 {
			close(b.all)
		}
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(10 * time.Second):
		return nil, errors.New("barrier: the other clients did not load the token")
	}
	return t, err
}

// TestSharedRefresh: two replicas hold the same expired token; both need
// it at once. With a shared store, one refreshes and the other takes the
// token it stored: the refresh token, which the authorization server
// rotates, is used once, and nobody is asked to sign in again.
func TestSharedRefresh(t *testing.T) {
	for _, kind := range []string{"redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			s := mustOpen(t, kind, startDB(t, kind).URL)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
			r := &replica{cfg: childConfig{Auth: as.MCPURL}, s: s}
			if err := r.echo(ctx, &browser{}); err != nil {
				t.Fatal(err)
			}
			st, err := s.tokens.Load(ctx, as.MCPURL)
			if err != nil || st == nil {
				t.Fatalf("stored token: %v %v", st, err)
			}
			st.Token.Expiry = time.Now().Add(-time.Minute)
			if err := s.tokens.Save(ctx, as.MCPURL, st); err != nil {
				t.Fatal(err)
			}
			shared := newBarrier(s.tokens, 2)
			errs := make(chan error, 2)
			users := []*browser{{refuse: true}, {refuse: true}}
			for _, u := range users {
				go func() {
					r := &replica{cfg: childConfig{Auth: as.MCPURL}, s: &stores{tokens: shared}}
					errs <- r.echo(ctx, u)
				}()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if c := as.Counts(); c.Refreshes != 1 || c.Authorizations != 1 || users[0].opened+users[1].opened != 0 {
				t.Errorf("authorization server counts %+v, users sent %d, %d times; want 1 refresh, 1 sign-in, none again",
					c, users[0].opened, users[1].opened)
			}
		})
	}
}
