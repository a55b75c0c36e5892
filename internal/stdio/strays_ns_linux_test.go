package stdio

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeProc writes a procfs at a temporary root whose "self" is self and
// whose table holds a server (leader) with a child that left its group
// (setsid): the stray a real /proc would show.
func fakeProc(t *testing.T, self string, leader, stray int) string {
	t.Helper()
	root := t.TempDir()
	stat := func(pid, ppid, pgid, sid int) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// pid (comm) state ppid pgrp session, then 16 fields to starttime.
		line := fmt.Sprintf("%d (a) server) S %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, ppid, pgid, sid, 1000+pid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host := os.Getpid()
	stat(host, 1, host, host)
	stat(leader, host, leader, host)
	stat(stray, leader, stray, stray)
	if self != "" {
		if err := os.Symlink(self, filepath.Join(root, "self")); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestStraysOtherPidNamespace: a procfs whose pids are not this
// process's (its "self" is not os.Getpid(): a container that sees its
// host's /proc) is not searched, so Close cannot kill by pids that name
// other processes; the same table under this process's "self" is.
// (Only note runs here: the pids are made up.)
func TestStraysOtherPidNamespace(t *testing.T) {
	const leader, stray = 3_999_901, 3_999_902
	for _, c := range []struct {
		name, self string
		found      bool
	}{
		{"this process's namespace", strconv.Itoa(os.Getpid()), true},
		{"another namespace", strconv.Itoa(os.Getpid() + 1), false},
		{"no self", "", false},
	} {
		root := fakeProc(t, c.self, leader, stray)
		s := newStrays(leader)
		s.root = root
		s.note()
		if _, found := s.procs[stray]; found != c.found || len(s.procs) > 1 {
			t.Errorf("%s: noted %v, want the stray noted: %v", c.name, s.procs, c.found)
		}
	}
}
