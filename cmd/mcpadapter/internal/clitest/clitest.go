// Package clitest runs the mcpadapter programs in tests, as a user would: it
// builds them, runs them in a fresh directory with a fresh HOME and checks
// what they print, and drives them in a real terminal (a tmux pane).
package clitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Build builds the main package pkg (an import path, or "." for the
// package under test) into dir/name and returns the program's path. It
// runs the go command, in TestMain, before any test.
func Build(dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// Result is what one run of a program produced.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs bin with args in dir, which is also its HOME (so that no config
// is found unless the test writes one), with env added to the environment
// and stdin as its input, and returns what it printed.
func Run(t *testing.T, bin, dir, stdin string, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "OPENAI_API_KEY=", "MCP_TOKEN=")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	return Result{out.String(), errb.String(), code}
}

// Must fails the test unless the run exited with code and its stdout and
// stderr hold the given strings; a Go stack trace on stderr fails it too.
func (r Result) Must(t *testing.T, code int, stdout, stderr []string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, code, r.Stdout, r.Stderr)
	}
	for _, s := range stdout {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
		}
	}
	for _, s := range stderr {
		if !strings.Contains(r.Stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "goroutine ") || strings.Contains(r.Stderr, "panic:") {
		t.Errorf("a Go stack trace on stderr:\n%s", r.Stderr)
	}
}
