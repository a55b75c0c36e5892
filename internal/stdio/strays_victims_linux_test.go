package stdio

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startVictim starts an unrelated `sleep` of this process, in a process
// group of its own (Setpgid) or a session of its own (Setsid), and ends it
// when the test does.
func startVictim(t *testing.T, attr *syscall.SysProcAttr) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd
}

// victimGroup is an unrelated process in a process group whose leader
// has exited (a shell pipeline's first command that ended): the group
// lasts, its id is no process's pid.
type victimGroup struct{ pgid, pid int }

func orphanedGroup(t *testing.T) victimGroup {
	t.Helper()
	cmd := exec.Command("sh", "-c", `sleep 300 </dev/null >/dev/null 2>&1 & echo $!`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.Output() // waits for the leader: its pid is free
	if err != nil {
		t.Fatal(err)
	}
	var g victimGroup
	if _, err := fmt.Sscanf(string(out), "%d", &g.pid); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	g.pgid = cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(g.pid, syscall.SIGKILL) })
	if st, ok := readStat("/proc", g.pid); !ok || st.pgid != g.pgid {
		t.Fatalf("the orphaned group's member: %+v, %v", st, ok)
	}
	return g
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

// A server's child may join any process group of the host's session
// (setpgid only asks for the same session): the group of an unrelated
// process, or the group of another server of the same host. Close ends
// that child, and nothing else of the group it joined; unrelated processes
// with nearby pids, groups and sessions survive too.
func TestStdioCloseSparesGroupsStraysJoined(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Fatal("perl is not installed")
	}
	t.Parallel()
	victim := startVictim(t, &syscall.SysProcAttr{Setpgid: true})
	orphaned := orphanedGroup(t)
	loner := startVictim(t, &syscall.SysProcAttr{Setsid: true})
	other := shConn(t, `echo ready >&2; exec sleep 300`)
	otherPid := other.proc.cmd.Process.Pid
	c := shConn(t, fmt.Sprintf(`
		perl -e 'setpgrp(0, %d); exec "sleep", "303"' & echo "pid $!" >&2
		perl -e 'setpgrp(0, %d); exec "sleep", "304"' & echo "pid $!" >&2
		perl -e 'setpgrp(0, %d); exec "sleep", "305"' & echo "pid $!" >&2
		while :; do sleep 1; done`, victim.Process.Pid, otherPid, orphaned.pgid))
	c.grace = 50 * time.Millisecond
	after := startVictim(t, &syscall.SysProcAttr{Setpgid: true})
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 3; {
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
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for i, group := range []int{victim.Process.Pid, otherPid, orphaned.pgid} {
		for deadline := time.Now().Add(10 * time.Second); ; {
			if st, ok := readStat("/proc", pids[i]); ok && st.pgid == group {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("child %d did not join group %d", pids[i], group)
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
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("the server's child %d still runs after Close", pid)
		}
	}
	for name, pid := range map[string]int{
		"an unrelated process whose group a stray joined":  victim.Process.Pid,
		"another server whose group a stray joined":        otherPid,
		"an unrelated process in a session of its own":     loner.Process.Pid,
		"an unrelated process whose group's leader exited": orphaned.pid,
		"an unrelated process started after the server":    after.Process.Pid,
	} {
		if !alive(pid) {
			t.Errorf("%s (%d) was killed by the server's Close", name, pid)
		}
	}
	if other.proc.exitedNow() {
		t.Error("the other server exited")
	}
}

// A session or group id a stray made belongs to it only while the id is
// not another process's pid: once every member has gone, the kernel may
// give the id to an unrelated process, which may make a session or group
// of the same id before Close kills. (The reuse cannot be forced with real
// processes without privileges over the pid namespace: a table stands in
// for /proc here.)
func TestStraysOwnsNotReusedIDs(t *testing.T) {
	const host, stray, start = 100, 4242, 777
	s := newStrays(200)
	s.sid = host
	s.procs[stray] = start
	s.sids[stray] = start
	s.pgids[stray+1] = start + 1
	s.procs[stray+1] = start + 1
	member := procStat{state: 'S', ppid: 1, pgid: 5000, sid: stray, start: 900}
	groupMember := procStat{state: 'S', ppid: 1, pgid: stray + 1, sid: host, start: 900}
	for _, c := range []struct {
		name  string
		procs map[int]procStat
		pid   int
		st    procStat
		want  bool
	}{
		{"in the stray's session, the stray running", map[int]procStat{stray: {sid: stray, pgid: stray, start: start}}, 5000, member, true},
		{"in the stray's session, the stray gone", map[int]procStat{}, 5000, member, true},
		{"in a session of the stray's id, its pid reused", map[int]procStat{stray: {sid: stray, pgid: stray, start: start + 50}}, 5000, member, false},
		{"in the stray's group, the stray running", map[int]procStat{stray + 1: {sid: host, pgid: stray + 1, start: start + 1}}, 5001, groupMember, true},
		{"in a group of the stray's id, its pid reused", map[int]procStat{stray + 1: {sid: host, pgid: stray + 1, start: start + 60}}, 5001, groupMember, false},
		{"the stray's pid, reused", map[int]procStat{}, stray, procStat{pgid: 1, sid: 1, start: start + 70}, false},
		{"the stray", map[int]procStat{}, stray, procStat{pgid: stray, sid: stray, start: start}, true},
		{"the host's session", map[int]procStat{}, 5002, procStat{pgid: 5002, sid: host, start: 1}, false},
	} {
		if got := s.owns(c.procs, c.pid, c.st); got != c.want {
			t.Errorf("%s: owns = %v, want %v", c.name, got, c.want)
		}
	}
}

// A server that ignores SIGTERM and, told to stop (stdin's end), starts a
// `setsid sleep`: Close ends that one too.
func TestStdioCloseEndsStraysStartedWhileStopping(t *testing.T) {
	t.Parallel()
	c := shConn(t, `trap '' TERM; cat >/dev/null; setsid sleep 306 & echo "pid $!" >&2; while :; do sleep 1; done`)
	c.grace = 500 * time.Millisecond // room for the shell to start it before the last look
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
	var pid int
	for _, l := range c.Stderr() {
		_, _ = fmt.Sscanf(l, "pid %d", &pid)
	}
	if pid == 0 {
		t.Fatalf("the server did not start its child while stopping: %q", c.Stderr())
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if alive(pid) {
		t.Errorf("the child %d it started while stopping still runs", pid)
	}
}

// liveThreads counts the threads of pid that are not zombies: a process
// whose first thread exited reads as a zombie in /proc/<pid>/stat while
// its other threads run.
func liveThreads(pid int) int {
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, e.Name()))
		i := strings.LastIndexByte(string(b), ')')
		if err == nil && i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X' {
			n++
		}
	}
	return n
}

// A stray whose first thread exits (SYS_exit, not exit_group) while
// another runs on looks like a zombie in /proc/<pid>/stat: Close ends it
// all the same.
func TestStdioCloseEndsStrayWithZombieLeader(t *testing.T) {
	if err := exec.Command("perl", "-Mthreads", "-MPOSIX", "-e", "1").Run(); err != nil {
		t.Fatalf("perl with threads: %v", err)
	}
	t.Parallel()
	c := shConn(t, `perl -Mthreads -MPOSIX -e 'POSIX::setsid(); threads->create(sub { sleep 300 }); print STDERR "pid $$\n"; syscall(60, 0)' &
		while :; do sleep 1; done`)
	c.grace = 50 * time.Millisecond
	pid := 0
	for deadline := time.Now().Add(10 * time.Second); ; {
		for _, l := range c.Stderr() {
			_, _ = fmt.Sscanf(l, "pid %d", &pid)
		}
		if pid != 0 && zombie(pid) && liveThreads(pid) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stray %d did not end its first thread: %q", pid, c.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
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
	if n := liveThreads(pid); n > 0 {
		t.Errorf("the stray %d still runs %d threads after Close", pid, n)
	}
}
