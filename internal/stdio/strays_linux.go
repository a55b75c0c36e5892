package stdio

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// strays are the server's descendants that left its process group
// (setsid, setpgid): killing the group does not reach them. Linux only,
// from /proc. A descendant is found by its parent chain while that chain
// is intact, so close notes them before it stops the server; then it
// kills them by pid (the same process: its start time is checked), and
// everything in the sessions and process groups they made, which also
// ends what they started and left behind (a setsid'd shell's orphaned
// background job).
//
// A session or group counts only when a noted stray made it (its id is
// that stray's pid): setpgid lets any process join an existing group of
// its session (the host's, another server's), and those are not the
// server's to end. And only while that stray's pid is not someone else's
// (the kernel keeps an id unused while its session or group lasts, but
// one that ended between note and kill can be reused).
//
// Not covered: a process that left before close and whose parent chain
// to the server was already cut (a double-fork daemon whose intermediate
// parent exited is re-parented to init, or to a subreaper; nothing then
// ties it to the server), unless it stayed in a session or group a noted
// stray made.
//
// The pids in /proc are those of the pid namespace procfs was mounted
// for; when that is not this process's (a container that sees its host's
// /proc), they name other processes than this process's pids do, and
// strays finds none.
type strays struct {
	root   string         // the procfs mount, "/proc"
	leader int            // the server's pid, its process group's id
	sid    int            // the server's session (this process's)
	procs  map[int]uint64 // pid → start time
	sids   map[int]uint64 // sessions strays made → the maker's start time
	pgids  map[int]uint64 // groups strays made in the server's session → the maker's start time
}

func newStrays(leader int) *strays {
	return &strays{root: "/proc", leader: leader, sid: -1, procs: map[int]uint64{}, sids: map[int]uint64{}, pgids: map[int]uint64{}}
}

// procStat is what strays read of /proc/<pid>/stat.
type procStat struct {
	state           byte
	ppid, pgid, sid int
	start           uint64
}

// readStat reads /proc/<pid>/stat; false when the process is gone or the
// file cannot be read.
func readStat(root string, pid int) (procStat, bool) {
	b, err := os.ReadFile(root + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime ...; comm may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	var st procStat
	var err1, err2, err3, err4 error
	st.state = f[0][0]
	st.ppid, err1 = strconv.Atoi(f[1])
	st.pgid, err2 = strconv.Atoi(f[2])
	st.sid, err3 = strconv.Atoi(f[3])
	st.start, err4 = strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procStat{}, false
	}
	return st, true
}

// ownNamespace reports whether the pids of the procfs at root are this
// process's: its "self" is this process's pid.
func ownNamespace(root string) bool {
	self, err := os.Readlink(root + "/self")
	return err == nil && self == strconv.Itoa(os.Getpid())
}

// allProcs reads the stat of every process in the procfs at root; nil
// when it cannot be read.
func allProcs(root string) map[int]procStat {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	out := make(map[int]procStat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(root, pid); ok {
			out[pid] = st
		}
	}
	return out
}

// note adds the server's descendants outside its process group, found
// through their parents, to s. It notes none when the procfs's pids are
// not this process's.
func (s *strays) note() {
	if !ownNamespace(s.root) {
		return
	}
	procs := allProcs(s.root)
	lead, ok := procs[s.leader]
	if !ok || lead.pgid != s.leader {
		return // gone (the pid may be another's now)
	}
	s.sid = lead.sid
	children := make(map[int][]int, len(procs))
	for pid, st := range procs {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	// Breadth first, bounded by the process count (no pid is its own
	// ancestor, but the table is read while it changes).
	queue := append([]int(nil), children[s.leader]...)
	seen := map[int]bool{s.leader: true}
	var found []int
	for len(queue) > 0 && len(seen) <= len(procs) {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, children[pid]...)
		st := procs[pid]
		if st.pgid == s.leader {
			continue // the group kill reaches it
		}
		s.procs[pid] = st.start
		found = append(found, pid)
	}
	for _, pid := range found {
		st := procs[pid]
		if st.sid != s.sid {
			if start, ok := s.procs[st.sid]; ok {
				s.sids[st.sid] = start
			}
		} else if start, ok := s.procs[st.pgid]; ok {
			s.pgids[st.pgid] = start
		}
	}
}

// kill kills every stray, and waits, up to limit, until none is left
// running (a zombie only waits to be reaped by its new parent). A
// process whose first thread exited reads as a zombie while its other
// threads run: zombies are signalled too (their pid is not reused until
// they are reaped), and count as running while a thread of theirs does.
func (s *strays) kill(limit time.Duration) {
	if len(s.procs) == 0 || !ownNamespace(s.root) {
		return
	}
	self := os.Getpid()
	deadline := time.Now().Add(limit)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 20*time.Millisecond) {
		left := 0
		procs := allProcs(s.root)
		for pid, st := range procs {
			if pid == self || pid == s.leader || !s.owns(procs, pid, st) {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if st.state != 'Z' && st.state != 'X' || threadsRun(s.root, pid) {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
	}
}

// threadsRun reports whether a thread of pid other than its first runs.
func threadsRun(root string, pid int) bool {
	tasks, err := os.ReadDir(root + "/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return false
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil || tid == pid {
			continue
		}
		b, err := os.ReadFile(root + "/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/stat")
		i := bytes.LastIndexByte(b, ')')
		if err == nil && i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X' {
			return true
		}
	}
	return false
}

// owns reports whether the process pid, with stat st, is a stray or in a
// session or process group a stray made; procs is the process table it
// was read from.
func (s *strays) owns(procs map[int]procStat, pid int, st procStat) bool {
	if start, ok := s.procs[pid]; ok && start == st.start {
		return true
	}
	if start, ok := s.sids[st.sid]; ok && st.sid != s.sid && made(procs, st.sid, start) {
		return true
	}
	start, ok := s.pgids[st.pgid]
	return ok && st.sid == s.sid && made(procs, st.pgid, start)
}

// made reports whether the session or group id is still the one the
// stray that started at start made: its pid is free (the stray has gone,
// its session or group lasts) or still the stray's.
func made(procs map[int]procStat, id int, start uint64) bool {
	maker, ok := procs[id]
	return !ok || maker.start == start
}
