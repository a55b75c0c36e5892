//go:build unix

package stdio

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shConn starts sh -c script as a stdio server and returns its connection.
func shConn(t *testing.T, script string) *Conn {
	t.Helper()
	p, err := startProcess("/bin/sh", []string{"-c", script}, nil, "", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(p, DefaultMaxMessageBytes, 2*time.Second, nil, nil)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readExit reads c to its end and returns how long that took and the
// *ExitError it reported.
func readExit(t *testing.T, c *Conn) (time.Duration, *ExitError) {
	t.Helper()
	start := time.Now()
	_, err := c.Read(t.Context())
	d := time.Since(start)
	var pe *ExitError
	if !errors.As(err, &pe) {
		t.Fatalf("read: %v, want an *ExitError", err)
	}
	return d, pe
}

// A server that closes its stdout and keeps running is reported as
// StillRunning, and stopped: the error is true ("it was killed"), its
// group is gone, its last stderr words are kept, and it does not count as
// having exited by itself. (TestStdioClosedStdoutKernelTells: on Linux it
// is told at once, without waiting for the process.)
func TestStdioClosedStdoutStillRunning(t *testing.T) {
	t.Parallel()
	c := shConn(t, `exec >&-; sleep 30 & echo "child $!" >&2; echo "stdout closed" >&2; wait`)
	d, pe := readExit(t, c)
	if !pe.StillRunning {
		t.Fatalf("%v, want StillRunning", pe)
	}
	t.Logf("reported after %v: %v", d.Round(time.Millisecond), pe)
	if !c.proc.exitedNow() {
		t.Error("the server is still running")
	}
	stderr := c.Stderr()
	if !slices.Contains(stderr, "stdout closed") {
		t.Errorf("stderr tail %q lacks the server's last words", stderr)
	}
	var child int
	for _, l := range stderr {
		fmt.Sscanf(l, "child %d", &child)
	}
	// The rest of its group (sleep) was killed too; it may take a moment
	// to go.
	for deadline := time.Now().Add(5 * time.Second); child > 0 && syscall.Kill(child, 0) == nil && !zombie(child); {
		if time.Now().After(deadline) {
			t.Fatalf("the server's child %d is still running", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c.ExitedAlone() {
		t.Error("ExitedAlone, want false: the client stopped it")
	}
}

// On Linux a process that closed its stdout and runs on is told apart
// from one that exits by the kernel (/proc), not by waiting: exitError
// given an hour to wait reports StillRunning all the same.
func TestStdioClosedStdoutKernelTells(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc tells an exiting process on Linux only; elsewhere the wait decides")
	}
	t.Parallel()
	c := shConn(t, `exec >&-; echo "stdout closed" >&2; sleep 30`)
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(c.Stderr(), "stdout closed"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not close its stdout")
		}
	}
	done := make(chan *ExitError, 1)
	go func() { done <- c.proc.exitError(time.Hour) }()
	select {
	case pe := <-done:
		if !pe.StillRunning {
			t.Errorf("%v, want StillRunning", pe)
		}
	case <-time.After(30 * time.Second): // a hang guard: without /proc the hour is waited
		t.Fatal("exitError waits for the process: the kernel's word was not taken")
	}
}

// A server that closes its stdout just before it exits is reported with
// its exit status, not as StillRunning.
func TestStdioClosedStdoutThenExit(t *testing.T) {
	t.Parallel()
	for _, script := range []string{`exit 3`, `exec >&-; exit 3`} {
		c := shConn(t, script)
		d, pe := readExit(t, c)
		if pe.StillRunning || pe.ExitCode != 3 {
			t.Errorf("%s: %+v after %v, want exit status 3", script, pe, d)
		}
		if !c.ExitedAlone() {
			t.Errorf("%s: ExitedAlone false, want true", script)
		}
	}
}

// zombie reports whether pid has exited and awaits its reaper (Linux).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// Close ends the whole process group, even a server and a child of it
// that ignore SIGTERM and stdin's end: after two graces they are killed,
// and are gone when Close returns.
func TestStdioCloseKillsGroup(t *testing.T) {
	t.Parallel()
	c := shConn(t, `trap '' TERM; sleep 30 & echo "child $!" >&2; while :; do sleep 1; done`)
	c.grace = 50 * time.Millisecond
	var child int
	for deadline := time.Now().Add(5 * time.Second); child == 0; {
		for _, l := range c.Stderr() {
			fmt.Sscanf(l, "child %d", &child)
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not report its child")
		}
		time.Sleep(10 * time.Millisecond)
	}
	leader := c.proc.cmd.Process.Pid
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a speed check
		t.Fatal("Close did not return")
	}
	if syscall.Kill(leader, 0) == nil {
		t.Errorf("the server %d is still there after Close", leader)
	}
	// Close waits for the whole group to be gone.
	if syscall.Kill(child, 0) == nil && !zombie(child) {
		t.Errorf("the server's child %d is still running when Close returns", child)
	}
	if c.ExitedAlone() {
		t.Error("ExitedAlone, want false: Close stopped it")
	}
}
