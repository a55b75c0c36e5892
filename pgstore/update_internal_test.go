package pgstore

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"golang.org/x/oauth2"
)

// TestSaveSentAgain: a save whose commit went through but whose answer
// was lost is sent again by Update's retries; the second finds the
// token it wrote and reports it saved, while a save over another
// writer's token reports it was not (mcpadapter.ErrTokenChanged).
func TestSaveSentAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, testdb.Postgres(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := NewTokenStore(ctx, pool, &TokenOptions{Key: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	tok := &mcpadapter.StoredToken{Token: &oauth2.Token{AccessToken: "a", RefreshToken: "r"}}
	if err := s.Save(ctx, "k", tok); err != nil {
		t.Fatal(err)
	}
	_, version, _, err := s.read(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.seal("k", tok)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if saved, err := s.compareAndSave(ctx, "k", "owner", version, b); err != nil || !saved {
			t.Errorf("save %d of the same token at version %d: %v %v, want saved", i+1, version, saved, err)
		}
	}
	other, _ := s.seal("k", tok) // sealed again: another writer's value
	if saved, err := s.compareAndSave(ctx, "k", "owner", version, other); err != nil || saved {
		t.Errorf("a save at a version already passed: %v %v, want not saved", saved, err)
	}
	for i := range 2 {
		if saved, err := s.compareAndSave(ctx, "new", "owner", 0, b); err != nil || !saved {
			t.Errorf("save %d of a first token: %v %v, want saved", i+1, saved, err)
		}
	}
}
