//go:build unix

package oauthflow

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestFileTokenStoreLocked: a save waits for another holder of the lock
// only as long as its context allows, then says why.
func TestFileTokenStoreLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	unlock, err := lockFile(context.Background(), path+".lock") // another process, as far as flock knows
	if err != nil {
		t.Fatal(err)
	}
	store := NewFileStore(path)
	tok := &StoredToken{Token: &oauth2.Token{AccessToken: "a"}, TokenURL: "https://as.example/token"}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = store.Save(ctx, "k", tok)
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	unlock()
	if err := store.Save(context.Background(), "k", tok); err != nil {
		t.Errorf("after unlock: %v", err)
	}
}
