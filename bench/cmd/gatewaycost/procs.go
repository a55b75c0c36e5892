package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// children owns every process the benchmark starts: each in a process
// group of its own, so that stopping a group also stops what it started
// (the gateway's stdio servers, supergateway's children).
type children struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
	held []io.Closer // children's stdin pipes, open while they should run
}

// hold keeps c (a child's stdin) open until killAll.
func (c *children) hold(w io.Closer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = append(c.held, w)
}

// start starts cmd in its own process group and keeps it for killAll.
func (c *children) start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.mu.Lock()
	c.cmds = append(c.cmds, cmd)
	c.mu.Unlock()
	return nil
}

// stop stops cmd's process group (SIGTERM, then SIGKILL after 3 s: a
// gateway stops its stdio servers, which are in groups of their own, on
// SIGTERM) and waits for cmd.
func (c *children) stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.cmds {
		if x == cmd {
			c.cmds = append(c.cmds[:i], c.cmds[i+1:]...)
			break
		}
	}
}

// killAll stops every process group still running.
func (c *children) killAll() {
	c.mu.Lock()
	cmds := append([]*exec.Cmd(nil), c.cmds...)
	held := c.held
	c.held = nil
	c.mu.Unlock()
	for _, w := range held {
		_ = w.Close()
	}
	for _, cmd := range cmds {
		c.stop(cmd)
	}
}

// startListening starts cmd and waits (at most wait) for a line of its
// output (stdout or stderr, whichever out is) that contains marker,
// returning that line. The rest of the output is drained.
func (c *children) startListening(cmd *exec.Cmd, fromStderr bool, marker string, wait time.Duration) (string, error) {
	var r io.ReadCloser
	var err error
	if fromStderr {
		r, err = cmd.StderrPipe()
	} else {
		r, err = cmd.StdoutPipe()
	}
	if err != nil {
		return "", err
	}
	if err := c.start(cmd); err != nil {
		return "", err
	}
	lines := make(chan string, 1)
	var tail []string
	var tmu sync.Mutex
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			if !sent && strings.Contains(sc.Text(), marker) {
				lines <- sc.Text()
				sent = true
				continue
			}
			tmu.Lock()
			if len(tail) < 20 {
				tail = append(tail, sc.Text())
			}
			tmu.Unlock()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if ok {
			return l, nil
		}
	case <-time.After(wait):
	}
	c.stop(cmd)
	tmu.Lock()
	defer tmu.Unlock()
	return "", fmt.Errorf("%s printed no %q within %s; output: %s", cmd.Path, marker, wait, strings.Join(tail, " | "))
}

// cpuOf returns the CPU time (user + system, all threads) of process pid
// from /proc/PID/stat, in clock ticks of 10 ms.
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: fields count after ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no ')'")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// rssOf returns VmRSS of process pid in bytes.
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP waits until something accepts TCP connections on addr.
func waitHTTP(ctx context.Context, addr string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listens on %s after %s", addr, wait)
}
