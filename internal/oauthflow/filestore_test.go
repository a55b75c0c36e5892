package oauthflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestFileStore: tokens round-trip through a file only the user can read;
// a file that is not JSON is an error to Load and moved aside by Save.
func TestFileStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "tokens.json")
	s := NewFileStore(path)
	if st, err := s.Load(ctx, "k"); st != nil || err != nil {
		t.Fatalf("missing file: %v, %v; want nothing", st, err)
	}
	tok := &StoredToken{Token: &oauth2.Token{AccessToken: "a", RefreshToken: "r"}, Scopes: []string{"x"}, ClientID: "c", TokenURL: "https://as.example/token"}
	if err := s.Save(ctx, "k", tok); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v, %v; want mode %v", p, fi.Mode().Perm(), err, want)
			}
		}
	}
	got, err := NewFileStore(path).Load(ctx, "k")
	if err != nil || got == nil || got.Token.AccessToken != "a" || got.Token.RefreshToken != "r" || got.ClientID != "c" || got.Scopes[0] != "x" {
		t.Fatalf("Load = %+v, %v", got, err)
	}

	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	var bad *corruptFileError
	if _, err := s.Load(ctx, "k"); !errors.As(err, &bad) {
		t.Errorf("Load of a corrupt file: %v", err)
	}
	if err := s.Save(ctx, "k2", tok); err != nil {
		t.Fatal(err)
	}
	if old, err := os.ReadFile(path + ".corrupt"); err != nil || string(old) != "{not json" {
		t.Errorf("the corrupt file was not kept aside: %q, %v", old, err)
	}
	if got, err := s.Load(ctx, "k2"); err != nil || got == nil {
		t.Errorf("after the corrupt file: %v, %v", got, err)
	}
}

// TestStoredTokenString: String and LogValue show no secret.
func TestStoredTokenString(t *testing.T) {
	st := &StoredToken{Token: &oauth2.Token{AccessToken: "acc-secret", RefreshToken: "ref-secret", Expiry: time.Unix(0, 0)}, ClientID: "c", ClientSecret: "cli-secret"}
	for _, s := range []string{st.String(), st.LogValue().String()} {
		if strings.Contains(s, "secret") || !strings.Contains(s, "refresh token: true") {
			t.Errorf("%s", s)
		}
	}
	if s := (*StoredToken)(nil).String(); s != "StoredToken(none)" {
		t.Errorf("nil: %s", s)
	}
}
