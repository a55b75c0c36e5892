package oauthflow

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenCommand checks that the command's output, trimmed, is the
// token, and that a failure or an empty output is an error that does not
// quote the output.
func TestTokenCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	ctx := context.Background()
	tok, err := TokenCommand([]string{sh, "-c", "printf '  id-token\\n'"})(ctx)
	if err != nil || tok != "id-token" {
		t.Fatalf("got %q, %v; want the trimmed output", tok, err)
	}
	_, err = TokenCommand([]string{sh, "-c", "echo SECRET; exit 3"})(ctx)
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("failing command: err = %v; want its exit status, without its output", err)
	}
	if _, err = TokenCommand([]string{sh, "-c", "true"})(ctx); err == nil || !strings.Contains(err.Error(), "printed nothing") {
		t.Fatalf("silent command: err = %v", err)
	}
}

// TestReadKeyFile checks the empty path, a missing file and a file that
// is not a key, whose content the error does not quote.
func TestReadKeyFile(t *testing.T) {
	if k, err := ReadKeyFile("dpopKeyFile", ""); k != nil || err != nil {
		t.Fatalf("empty path: %v, %v; want none", k, err)
	}
	dir := t.TempDir()
	if _, err := ReadKeyFile("dpopKeyFile", filepath.Join(dir, "missing.pem")); err == nil || !strings.HasPrefix(err.Error(), "dpopKeyFile: ") {
		t.Fatalf("missing file: err = %v", err)
	}
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("SECRETCONTENT"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile("privateKeyFile", bad); err == nil || strings.Contains(err.Error(), "SECRETCONTENT") {
		t.Fatalf("bad key: err = %v; want an error without the content", err)
	}
}

// TestAssertionFile checks that the file is read on each call, trimmed,
// and that an empty file is an error.
func TestAssertionFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	src := AssertionFile(path)
	for _, want := range []string{"jwt-1", "jwt-2"} {
		if err := os.WriteFile(path, []byte("\n"+want+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := src(context.Background()); err != nil || got != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	}
	if err := os.WriteFile(path, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := src(context.Background()); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("empty file: err = %v", err)
	}
}
