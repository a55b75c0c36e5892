//go:build unix

package stdio

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A watcher is a small process in the server's process group that kills
// the whole group when this process dies, however it dies (kill -9
// included, which no handler of this process sees): sh reading a pipe
// whose write end only this process holds. When this process exits the
// pipe closes, the read returns, and the watcher kills its own group, so
// a server's children and the real server behind a shell wrapper (npx, a
// `sh -c` line) go too. (Pdeathsig, Linux only, reaches only the direct
// child.) It ignores SIGTERM, so that Close's SIGTERM step leaves it in
// place until the final SIGKILL.
//
// Not covered: a process that leaves the group (setsid, setpgid), and a
// server that moves itself to a new session before the watcher starts
// (then it cannot join the group and is not started).
type watcher struct {
	cmd  *exec.Cmd
	hold *os.File      // the pipe's write end: closing it fires the watcher
	done chan struct{} // closed when the watcher has been reaped
}

const watchScript = `trap '' HUP INT QUIT TERM; read -r line; kill -s KILL 0`

// startWatcher starts a watcher in process group pgid.
func startWatcher(pgid int) (*watcher, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchScript, "mcpadapter-watcher")
	cmd.Stdin = r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid} // no Pdeathsig: it must outlive us
	if err := cmd.Start(); err != nil {
		closeAll(r, w)
		return nil, err
	}
	_ = r.Close()
	wt := &watcher{cmd: cmd, hold: w, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(wt.done)
	}()
	return wt, nil
}

// stop releases the watcher's pipe (if it is still there, it kills what is
// left of the group, itself included) and waits until it has been reaped.
func (w *watcher) stop() {
	if w == nil {
		return
	}
	_ = w.hold.Close()
	select {
	case <-w.done:
	case <-time.After(groupGoneWait):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// waitGroupGone waits, up to limit, until no process of cmd's process group
// is left running (a zombie, which only waits to be reaped, does not
// count). It reports whether the group is gone.
func waitGroupGone(cmd *exec.Cmd, limit time.Duration) bool {
	if cmd.Process == nil {
		return true
	}
	pgid := cmd.Process.Pid
	deadline := time.Now().Add(limit)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 20*time.Millisecond) {
		if syscall.Kill(-pgid, 0) == syscall.ESRCH || onlyZombies(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}

// onlyZombies reports whether every process of group pgid is a zombie, from
// /proc; false where /proc cannot say.
func onlyZombies(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := bytes.LastIndexByte(stat, ')')
		if err != nil || i < 0 {
			continue // gone meanwhile
		}
		f := strings.Fields(string(stat[i+1:])) // state ppid pgrp ...
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if f[0] != "Z" && f[0] != "X" {
			return false
		}
	}
	return true
}
