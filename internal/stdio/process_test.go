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
	c := newConn(p, DefaultMaxMessageBytes, 2*time.Second, nil, nil, false)
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

// A server that closes its stdout and keeps running is reported at once
// (it used to take 2 s) as StillRunning, and stopped: the error is true
// ("it was killed"), its group is gone, its last stderr words are kept, and
// it does not count as having exited by itself.
func TestStdioClosedStdoutStillRunning(t *testing.T) {
	t.Parallel()
	c := shConn(t, `exec >&-; sleep 30 & echo "child $!" >&2; echo "stdout closed" >&2; wait`)
	d, pe := readExit(t, c)
	if !pe.StillRunning {
		t.Fatalf("%v, want StillRunning", pe)
	}
	t.Logf("reported after %v: %v", d.Round(time.Millisecond), pe)
	if runtime.GOOS == "linux" && d > 1500*time.Millisecond {
		t.Errorf("took %v, want about %v", d, closedStdoutSettle+2*closedStdoutGrace)
	}
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
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v, want about two graces", d)
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
