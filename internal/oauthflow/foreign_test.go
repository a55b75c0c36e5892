package oauthflow

import (
	"context"
	"testing"

	"golang.org/x/oauth2"
)

// token is another package's copy of StoredToken.
type token StoredToken

func conv() Conv[token] {
	return Conv[token]{
		To:   func(t *token) *StoredToken { return (*StoredToken)(t) },
		From: func(t *StoredToken) *token { return (*token)(t) },
	}
}

// userUpdater is a user's store that locks keys, kept in a map.
type userUpdater struct{ m map[string]*token }

func (u *userUpdater) Load(_ context.Context, key string) (*token, error) { return u.m[key], nil }
func (u *userUpdater) Save(_ context.Context, key string, t *token) error {
	u.m[key] = t
	return nil
}
func (u *userUpdater) Update(ctx context.Context, key string, fn func(context.Context, *token) (*token, error)) error {
	next, err := fn(ctx, u.m[key])
	if err == nil && next != nil {
		u.m[key] = next
	}
	return err
}

// TestForeignStores checks both ways across the package line: this
// package's stores handed out and back come back as themselves, and a
// user's updater comes in as an Updater whose tokens are the user's.
func TestForeignStores(t *testing.T) {
	ctx := context.Background()
	mem := NewMemoryStore()
	if got := Inward[token](Outward[token]{S: mem, C: conv()}, conv()); got != mem {
		t.Fatalf("an Outward came back as %T, not its own store", got)
	}
	if Inward[token](nil, conv()) != nil {
		t.Fatal("nil did not stay nil")
	}
	out := Outward[token]{S: mem, C: conv()}
	if err := out.Save(ctx, "k", &token{ClientID: "c", Token: &oauth2.Token{AccessToken: "a"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := mem.Load(ctx, "k"); err != nil || got.ClientID != "c" {
		t.Fatalf("saved through Outward, loaded %v, %v", got, err)
	}
	user := &userUpdater{m: map[string]*token{}}
	in, ok := Inward[token](user, conv()).(Updater)
	if !ok {
		t.Fatal("a user's updater did not come in as an Updater")
	}
	err := in.Update(ctx, "k", func(_ context.Context, cur *StoredToken) (*StoredToken, error) {
		if cur != nil {
			t.Errorf("cur = %v, want none", cur)
		}
		return &StoredToken{ClientID: "u"}, nil
	})
	if err != nil || user.m["k"].ClientID != "u" {
		t.Fatalf("Update: %v, stored %v", err, user.m["k"])
	}
}
