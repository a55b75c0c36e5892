//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgentInterrupt: "mcpadapter agent" becomes the agent program (no
// mcpadapter process stays behind), an interrupt (Ctrl-C) reaches it, and
// it ends with the demo's stdio server, leaving no process behind.
func TestAgentInterrupt(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin, "agent", "--model", "m", "--base-url", "http://127.0.0.1:1/v1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "OPENAI_API_KEY=", "MCP_TOKEN=")
	stdin, err := cmd.StdinPipe() // open: the agent waits for a question
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "tools from demo") {
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe")
	if err != nil || filepath.Base(exe) != "mcpadapter-agent" {
		t.Errorf("the started process runs %q (%v), not the agent program", exe, err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the agent did not end within 15 s of an interrupt")
	}
	binDir := filepath.Dir(bin)
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesUnder(t, binDir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesUnder lists the command lines of running processes whose program
// is in dir.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if strings.HasPrefix(argv[0], dir+string(filepath.Separator)) {
			out = append(out, strings.Join(argv, " "))
		}
	}
	return out
}
