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
// Not covered: a process that left before close and whose parent chain
// to the server was already cut (a double-fork daemon whose intermediate
// parent exited is re-parented to init, or to a subreaper; nothing then
// ties it to the server), unless it stayed in a session or group a noted
// stray made.
type strays struct {
	leader int              // the server's pid, its process group's id
	sid    int              // the server's session (this process's)
	procs  map[int]uint64   // pid → start time
	sids   map[int]struct{} // sessions strays made
	pgids  map[int]struct{} // process groups strays made in the server's session
}

func newStrays(leader int) *strays {
	return &strays{leader: leader, sid: -1, procs: map[int]uint64{}, sids: map[int]struct{}{}, pgids: map[int]struct{}{}}
}

// procStat is what strays read of /proc/<pid>/stat.
type procStat struct {
	state           byte
	ppid, pgid, sid int
	start           uint64
}

// readStat reads /proc/<pid>/stat; false when the process is gone or the
// file cannot be read.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
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

// allProcs reads the stat of every process; nil when /proc cannot be read.
func allProcs() map[int]procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make(map[int]procStat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out[pid] = st
		}
	}
	return out
}

// note adds the server's descendants outside its process group, found
// through their parents, to s.
func (s *strays) note() {
	procs := allProcs()
	lead, ok := procs[s.leader]
	if !ok {
		return
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
		switch {
		case st.sid != s.sid:
			s.sids[st.sid] = struct{}{}
		case st.pgid != s.leader && st.pgid != s.sid && st.pgid != syscall.Getpgrp():
			// (A group it joined that this process is in is not its own.)
			s.pgids[st.pgid] = struct{}{}
		}
	}
}

// kill kills every stray, and waits, up to limit, until none is left
// running (a zombie only waits to be reaped by its new parent).
func (s *strays) kill(limit time.Duration) {
	if len(s.procs) == 0 {
		return
	}
	self := os.Getpid()
	deadline := time.Now().Add(limit)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 20*time.Millisecond) {
		left := 0
		for pid, st := range allProcs() {
			if pid == self || pid == s.leader || st.state == 'Z' || st.state == 'X' || !s.owns(pid, st) {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			left++
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
	}
}

// owns reports whether the process pid, with stat st, is a stray or in a
// session or process group a stray made.
func (s *strays) owns(pid int, st procStat) bool {
	if start, ok := s.procs[pid]; ok && start == st.start {
		return true
	}
	if _, ok := s.sids[st.sid]; ok && st.sid != s.sid {
		return true
	}
	_, ok := s.pgids[st.pgid]
	return ok && st.sid == s.sid
}
