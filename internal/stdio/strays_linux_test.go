package stdio

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Close ends the server's descendants that left its process group: a
// `setsid sleep` it started, a setsid'd shell and the job it waits for,
// a `setsid sh` whose background job it left behind (re-parented, but in
// the session the shell made), and a child that moved to a process group
// of its own (setpgid). After Close none
// of them runs.
func TestStdioCloseEndsSetsidDescendants(t *testing.T) {
	for _, prog := range []string{"setsid", "perl"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("%s is not installed", prog)
		}
	}
	t.Parallel()
	c := shConn(t, `
		setsid sleep 300 & echo "pid $!" >&2
		setsid sh -c 'sleep 301 & echo "pid $!" >&2; wait' &
		setsid sh -c '(sleep 302 & echo "pid $!" >&2); exec sleep 299' &
		perl -e 'setpgrp(0, 0); exec "sleep", "303"' & echo "pid $!" >&2
		echo ready >&2
		while :; do sleep 1; done`)
	c.grace = 50 * time.Millisecond
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 4; {
		pids = pids[:0]
		for _, l := range c.Stderr() {
			var pid int
			if _, err := fmt.Sscanf(l, "pid %d", &pid); err == nil {
				pids = append(pids, pid)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not report its children: %q", c.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() { // a failing run leaves nothing behind
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for _, pid := range pids {
		for deadline := time.Now().Add(10 * time.Second); ; {
			st, ok := readStat("/proc", pid)
			if ok && st.pgid != c.proc.cmd.Process.Pid {
				break
			}
			if !ok || time.Now().After(deadline) {
				t.Fatalf("child %d: %+v, %v: it did not leave the server's group", pid, st, ok)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
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
	var alive []string
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil && !zombie(pid) {
			st, _ := readStat("/proc", pid)
			alive = append(alive, fmt.Sprintf("%d (%+v)", pid, st))
		}
	}
	if len(alive) > 0 {
		t.Errorf("still running after Close: %s", strings.Join(alive, ", "))
	}
}
