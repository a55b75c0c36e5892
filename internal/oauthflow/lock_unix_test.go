//go:build unix

package oauthflow

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"
)

// TestFileTokenStoreLocked: a save waits for another holder of the lock
// only as long as its context allows, then says why; one that polls while
// the lock is released gets it. The clock is synctest's: the polling
// (every 20 ms) and the deadlines are exact.
func TestFileTokenStoreLocked(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
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
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("gave up after %v, want the context's 100ms", d)
		}

		// Released after 50 ms: the save that polls gets the lock at its
		// next poll.
		go func() {
			time.Sleep(50 * time.Millisecond)
			unlock()
		}()
		start = time.Now()
		if err := store.Save(context.Background(), "k", tok); err != nil {
			t.Errorf("after unlock: %v", err)
		}
		if d := time.Since(start); d != 60*time.Millisecond {
			t.Errorf("got the lock after %v, want 60ms (the third poll)", d)
		}
	})
}
