package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestCommandTargetEnvironment: a command target gets the safe set of the
// environment, not the user's secrets; --inherit-env passes more. (The
// target is a shell that writes its environment to a file, then runs the
// test server.)
func TestCommandTargetEnvironment(t *testing.T) {
	dir := t.TempDir()
	server := testserver.Build(t)
	env := []string{"AWS_SECRET_ACCESS_KEY=" + awsSecret, "GITHUB_TOKEN=" + githubToken}
	dump := func(args ...string) string {
		t.Helper()
		out := filepath.Join(dir, "env.txt")
		_ = os.Remove(out)
		argv := append(args, "tools", "--", "/bin/sh", "-c", `env > "$0"; exec "$1"`, out, server)
		cliEnv(t, dir, env, argv...).Must(t, 0, []string{"echo"}, nil)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	got := dump()
	if strings.Contains(got, awsSecret) || strings.Contains(got, githubToken) {
		t.Errorf("a command target got the user's secrets:\n%s", got)
	}
	if !strings.Contains(got, "PATH=") || !strings.Contains(got, "HOME=") {
		t.Errorf("a command target did not get the safe set:\n%s", got)
	}
	got = dump("--inherit-env", "GITHUB_TOKEN")
	if !strings.Contains(got, "GITHUB_TOKEN="+githubToken) || strings.Contains(got, awsSecret) {
		t.Errorf("--inherit-env GITHUB_TOKEN passed the wrong variables:\n%s", got)
	}
	cliEnv(t, dir, env, "tools", "--inherit-env", "X", "http://127.0.0.1:1/mcp").Must(t, 2, nil, []string{"--inherit-env applies to a command target"})
}
