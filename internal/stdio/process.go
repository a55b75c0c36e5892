package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process owns one server child process: its pipes, its stderr tail and
// its process group. It never outlives its connection: close kills the whole
// group, and on Linux the child is bound to the parent's death.
type process struct {
	cmd     *exec.Cmd
	name    string // the program, for messages
	stdin   *os.File
	stdout  *os.File
	stderr  *os.File
	tail    *lineRing
	exited  chan struct{} // closed when the process has been reaped
	waitErr error         // valid after exited is closed
	errDone chan struct{} // closed when stderr reached EOF or was closed
	watch   *watcher      // kills the group if this process dies; nil if it could not start

	closeOnce sync.Once
}

// startProcess starts path with args, with the environment env (nil means
// this process's; see Environ), in dir, with fresh pipes in its own process group. It keeps the last
// tailLines lines of stderr; onStderr, if non-nil, sees each of them.
func startProcess(path string, args, env []string, dir string, tailLines int, onStderr func(string)) (*process, error) {
	if path == "" {
		return nil, errors.New("no command to run (Transport.Path is empty)")
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = env
	setProcAttr(cmd)

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	// The child holds its own copies now.
	closeAll(inR, outW, errW)

	p := &process{
		cmd:     cmd,
		name:    path,
		stdin:   inW,
		stdout:  outR,
		stderr:  errR,
		tail:    newLineRing(tailLines),
		exited:  make(chan struct{}),
		errDone: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
		// A child of the server may still hold its stdout open; then no
		// EOF would ever come. Give the last messages a moment, then end
		// the read side so the connection sees the exit.
		time.AfterFunc(time.Second, func() { _ = p.stdout.Close() })
	}()
	go p.readStderr(onStderr)
	// Without a watcher the child still dies with this process (Linux),
	// but its own children may not.
	p.watch, _ = startWatcher(cmd.Process.Pid)
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// readStderr keeps the last lines of the server's stderr until it closes.
// It never stops reading early: a server blocked writing to a full stderr
// pipe would hang. Lines longer than 64 KiB are cut.
func (p *process) readStderr(onStderr func(string)) {
	defer close(p.errDone)
	r := bufio.NewReaderSize(p.stderr, 64*1024)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line) < 64*1024 {
			line = append(line, chunk[:min(len(chunk), 64*1024-len(line))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			s := strings.TrimRight(string(line), "\r\n")
			p.tail.add(s)
			if onStderr != nil {
				onStderr(s)
			}
			line = line[:0]
		}
		if err != nil {
			return
		}
	}
}

// groupGoneWait bounds the wait for the killed process group to be gone (a
// process in uninterruptible sleep dies late).
const groupGoneWait = 5 * time.Second

// How long a process that closed its stdout without exiting gets to exit
// by itself before it is reported StillRunning; and the grace of each step
// (stdin closed, SIGTERM) of stopping it then, at most.
const (
	closedStdoutSettle = 200 * time.Millisecond
	closedStdoutGrace  = 100 * time.Millisecond
)

// exitError describes how the process ended once its stdout closed. It
// returns an *ExitError, with StillRunning if the process did not
// exit.
//
// A process that exits closes its stdout a moment before it is reaped;
// one that closed its stdout itself may run on. On Linux the kernel tells
// the two apart at once: an exiting process is flagged (PF_EXITING in
// /proc/<pid>/stat) before its files are closed. An exiting process gets
// up to wait to be reaped; one that is not exiting gets closedStdoutSettle
// (a server may close stdout just before it exits). Where /proc cannot
// tell, the process gets up to wait.
func (p *process) exitError(wait time.Duration) *ExitError {
	e := &ExitError{Command: p.name, ExitCode: -1}
	if exiting, known := p.exiting(); known && !exiting {
		wait = min(wait, closedStdoutSettle)
	}
	select {
	case <-p.exited:
	case <-time.After(wait):
		e.StillRunning = true
		return e
	}
	// Let stderr drain so the tail includes the last words.
	select {
	case <-p.errDone:
	case <-time.After(200 * time.Millisecond):
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
			return e
		}
		e.ExitCode = ee.ExitCode()
		return e
	}
	if p.waitErr == nil {
		e.ExitCode = 0
	}
	return e
}

// close ends the process: it closes stdin and gives the server grace to
// exit, then terminates and finally kills its whole process group, so that
// grandchildren (npx, uvx and shell wrappers) go too, and on Linux the
// descendants that left the group (see strays).
func (p *process) close(grace time.Duration) {
	p.closeOnce.Do(func() {
		// Noted while the server still runs: once it exits, its
		// children's parent chain no longer leads to it.
		left := newStrays(p.cmd.Process.Pid)
		if !p.exitedNow() {
			left.note()
		}
		_ = p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(grace):
			signalGroup(p.cmd, syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(grace):
			}
		}
		// Whatever is left of the group (the leader if it ignored SIGTERM,
		// any grandchildren, the watcher) is killed, and is gone before
		// close returns: a host that exits right after leaves nothing.
		if !p.exitedNow() {
			left.note() // what it started during the grace
		}
		signalGroup(p.cmd, syscall.SIGKILL)
		<-p.exited
		waitGroupGone(p.cmd, groupGoneWait)
		left.kill(groupGoneWait)
		p.watch.stop()
		_ = p.stdout.Close()
		select {
		case <-p.errDone:
		case <-time.After(200 * time.Millisecond):
		}
		_ = p.stderr.Close()
		<-p.errDone
	})
}

// exiting reports whether the process has begun to exit or has exited, if
// the system says (Linux).
func (p *process) exiting() (exiting, known bool) {
	if p.exitedNow() {
		return true, true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		return false, false // not Linux, or already reaped
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags ...; comm may
	// hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return false, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 7 {
		return false, false
	}
	if f[0] == "Z" || f[0] == "X" || f[0] == "x" { // zombie or dead
		return true, true
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return false, false
	}
	const pfExiting = 0x4 // include/linux/sched.h
	return flags&pfExiting != 0, true
}

// exitedNow reports whether the process has ended.
func (p *process) exitedNow() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}
