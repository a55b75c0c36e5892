package oauthflow

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// lockedStore is an Updater in memory.
type lockedStore struct {
	Store
	mu sync.Mutex
}

func (s *lockedStore) Update(ctx context.Context, key string, fn func(context.Context, *StoredToken) (*StoredToken, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.Load(ctx, key)
	if err != nil {
		return err
	}
	next, err := fn(ctx, cur)
	if err != nil || next == nil {
		return err
	}
	return s.Save(ctx, key, next)
}

// TestConsume: a state is used once, in this process and, through the
// store, in another one; the record of used states keeps only those not
// yet expired, so it does not grow with every sign-in.
func TestConsume(t *testing.T) {
	for name, store := range map[string]Store{"Store": NewMemoryStore(), "Updater": &lockedStore{Store: NewMemoryStore()}} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			newWeb := func() *Web {
				w, err := NewWeb(WebConfig{ClientID: "c", Issuer: "https://as.example", RedirectURL: "https://app.example/cb",
					StateKey: []byte("0123456789abcdef"), Store: store})
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			a, b := newWeb(), newWeb()
			st := func(nonce string, exp time.Time) *webState {
				return &webState{Principal: "alice", Resource: "https://mcp.example/mcp", Nonce: nonce, Expires: exp.UnixMilli()}
			}
			past, later := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
			if err := a.consume(ctx, st("old", past)); err != nil {
				t.Fatal(err)
			}
			if err := a.consume(ctx, st("n1", later)); err != nil {
				t.Fatal(err)
			}
			if err := a.consume(ctx, st("n1", later)); !errors.Is(err, errStateUsed) {
				t.Errorf("n1 again here: %v", err)
			}
			if err := b.consume(ctx, st("n1", later)); !errors.Is(err, errStateUsed) {
				t.Errorf("n1 again in another process: %v", err)
			}
			rec, err := store.Load(ctx, signInsKey("https://mcp.example/mcp", "alice"))
			if err != nil || rec == nil {
				t.Fatal(rec, err)
			}
			if len(rec.Scopes) != 1 || !strings.HasPrefix(rec.Scopes[0], "n1 ") || rec.TokenURL != "" {
				t.Errorf("the record %q (token URL %q); want n1 only, no token endpoint", rec.Scopes, rec.TokenURL)
			}
			if tok, _ := store.Load(ctx, TokenKey("https://mcp.example/mcp", "alice")); tok != nil {
				t.Error("the record is under the token's key")
			}
		})
	}
}

// TestSourcesBounded: the token sources kept in memory are at most
// MaxPrincipals; the others are read from the store again.
func TestSourcesBounded(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	w, err := NewWeb(WebConfig{ClientID: "c", Issuer: "https://as.example", RedirectURL: "https://app.example/cb",
		StateKey: []byte("0123456789abcdef"), Store: store, MaxPrincipals: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		key := TokenKey("https://mcp.example/mcp", p)
		tok := &StoredToken{Token: &oauth2.Token{AccessToken: "at-" + p, Expiry: time.Now().Add(time.Hour)}, ClientID: "c", TokenURL: "https://as.example/token"}
		if err := store.Save(ctx, key, tok); err != nil {
			t.Fatal(err)
		}
		s, err := w.source(ctx, key, nil)
		if err != nil || s == nil || s.access != "at-"+p {
			t.Fatalf("%s: %+v %v", p, s, err)
		}
	}
	w.mu.Lock()
	n := len(w.sources)
	w.mu.Unlock()
	if n > 3 {
		t.Errorf("%d token sources in memory; want at most 3", n)
	}
}

// TestConsumeUntilExpiry: a used state stays in the store's record until
// the very millisecond it expires, not to the second before: a replica
// that prunes the record (another sign-in of the same user) in the last
// second of a state does not let a third replica take it again.
func TestConsumeUntilExpiry(t *testing.T) {
	for name, store := range map[string]Store{"Store": NewMemoryStore(), "Updater": &lockedStore{Store: NewMemoryStore()}} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			newWeb := func() *Web {
				w, err := NewWeb(WebConfig{ClientID: "c", Issuer: "https://as.example", RedirectURL: "https://app.example/cb",
					StateKey: []byte("0123456789abcdef"), Store: store})
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			st := func(nonce string, exp int64) *webState {
				return &webState{Principal: "alice", Resource: "https://mcp.example/mcp", Nonce: nonce, Expires: exp}
			}
			// A state expiring at the end of this second, with at least
			// half a second to go.
			now := time.Now()
			for i := 0; i < 100 && now.Nanosecond() >= 500*int(time.Millisecond); i++ {
				time.Sleep(10 * time.Millisecond)
				now = time.Now()
			}
			exp := now.Truncate(time.Second).Add(999 * time.Millisecond).UnixMilli()
			if err := newWeb().consume(ctx, st("n1", exp)); err != nil {
				t.Fatal(err)
			}
			if err := newWeb().consume(ctx, st("n2", time.Now().Add(time.Hour).UnixMilli())); err != nil {
				t.Fatal(err)
			}
			err := newWeb().consume(ctx, st("n1", exp))
			if time.Now().UnixMilli() < exp && !errors.Is(err, errStateUsed) {
				t.Errorf("n1 again on a third replica before it expired: %v; want it refused", err)
			}
		})
	}
}

// failingStore fails its next fails writes.
type failingStore struct {
	lockedStore
	fails int
}

func (s *failingStore) Update(ctx context.Context, key string, fn func(context.Context, *StoredToken) (*StoredToken, error)) error {
	s.mu.Lock()
	if s.fails > 0 {
		s.fails--
		s.mu.Unlock()
		return errors.New("store down")
	}
	s.mu.Unlock()
	return s.lockedStore.Update(ctx, key, fn)
}

func (s *failingStore) Save(ctx context.Context, key string, st *StoredToken) error {
	s.mu.Lock()
	if s.fails > 0 {
		s.fails--
		s.mu.Unlock()
		return errors.New("store down")
	}
	s.mu.Unlock()
	return s.lockedStore.Save(ctx, key, st)
}

// TestConsumeStoreFails: a state the store could not record as used is
// not used: the same callback, once the store is back, completes on the
// replica that saw the failure (the code was never sent), and only once,
// on any replica.
func TestConsumeStoreFails(t *testing.T) {
	ctx := context.Background()
	for name, updater := range map[string]bool{"Store": false, "Updater": true} {
		t.Run(name, func(t *testing.T) {
			fs := &failingStore{lockedStore: lockedStore{Store: NewMemoryStore()}, fails: 1}
			var store Store = fs
			if !updater {
				store = struct{ Store }{fs} // Load and Save only
			}
			newWeb := func() *Web {
				w, err := NewWeb(WebConfig{ClientID: "c", Issuer: "https://as.example", RedirectURL: "https://app.example/cb",
					StateKey: []byte("0123456789abcdef"), Store: store})
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			a, b := newWeb(), newWeb()
			st := &webState{Principal: "alice", Resource: "https://mcp.example/mcp", Nonce: "n1", Expires: time.Now().Add(time.Hour).UnixMilli()}
			if err := a.consume(ctx, st); err == nil || errors.Is(err, errStateUsed) {
				t.Fatalf("with the store down: %v; want the store's error", err)
			}
			if err := a.consume(ctx, st); err != nil {
				t.Errorf("the same state, the store back, on the same replica: %v", err)
			}
			if err := b.consume(ctx, st); !errors.Is(err, errStateUsed) {
				t.Errorf("then on another replica: %v; want it refused", err)
			}
		})
	}
}
