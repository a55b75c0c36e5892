package testserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// ListeningPrefix starts the first stderr line of an mcptestserver serving
// HTTP or SSE; the rest of the line is the endpoint URL.
const ListeningPrefix = "listening on "

// Process is a running mcptestserver serving HTTP or SSE.
type Process struct {
	// URL is the endpoint URL announced by the process.
	URL string
	// Cmd is the running command.
	Cmd *exec.Cmd

	waited chan struct{} // closed when the process has been reaped
	mu     sync.Mutex
	stderr bytes.Buffer
}

// Stderr returns what the process has written to stderr so far, including
// the "listening on" line.
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Exited is closed when the process has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.waited }

// Stop kills the process (SIGKILL) and waits until it has been reaped. It
// may be called more than once.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Kill()
	<-p.waited
}

// StartProcess starts the mcptestserver binary with args, which should
// select -transport http or sse, waits (up to 30s) for its "listening on URL"
// line and returns it. The process is killed on t.Cleanup.
func StartProcess(t testing.TB, args ...string) *Process {
	t.Helper()
	p, err := LaunchProcess(Build(t), 30*time.Second, args...)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

// LaunchProcess is StartProcess for code that cannot fail a test (another
// goroutine, a restart loop): it runs the mcptestserver binary bin (see
// [Build]), waits up to wait for its URL, and reports failure as an error.
// The caller must Stop the process.
func LaunchProcess(bin string, wait time.Duration, args ...string) (*Process, error) {
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting mcptestserver: %w", err)
	}
	p := &Process{Cmd: cmd, waited: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		defer close(p.waited)
		r := bufio.NewReader(stderr)
		first := true
		for {
			line, err := r.ReadString('\n')
			p.mu.Lock()
			p.stderr.WriteString(line)
			p.mu.Unlock()
			if first && strings.HasSuffix(line, "\n") {
				first = false
				urlc <- strings.TrimSpace(line)
			}
			if err != nil {
				if err != io.EOF {
					p.mu.Lock()
					fmt.Fprintf(&p.stderr, "[read error: %v]", err)
					p.mu.Unlock()
				}
				_ = cmd.Wait()
				return
			}
		}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case line := <-urlc:
		url, ok := strings.CutPrefix(line, ListeningPrefix)
		if !ok {
			p.Stop()
			return nil, fmt.Errorf("unexpected first stderr line %q", line)
		}
		p.URL = url
		return p, nil
	case <-p.waited:
		return nil, fmt.Errorf("mcptestserver exited before listening; stderr:\n%s", p.Stderr())
	case <-timer.C:
		p.Stop()
		return nil, fmt.Errorf("mcptestserver did not announce its URL within %v; stderr:\n%s", wait, p.Stderr())
	}
}
