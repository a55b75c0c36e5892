package testserver

import (
	"bufio"
	"bytes"
	"context"
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

// StartProcess starts the mcptestserver binary with args, which should
// select -transport http or sse, waits (up to 30s) for its "listening on URL"
// line and returns it. The process is killed on t.Cleanup.
func StartProcess(t testing.TB, args ...string) *Process {
	t.Helper()
	cmd := Command(t, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testserver: starting mcptestserver: %v", err)
	}
	p := &Process{Cmd: cmd}
	waited := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-waited
	})
	urlc := make(chan string, 1)
	go func() {
		defer close(waited)
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case line := <-urlc:
		url, ok := strings.CutPrefix(line, ListeningPrefix)
		if !ok {
			t.Fatalf("testserver: unexpected first stderr line %q", line)
		}
		p.URL = url
		return p
	case <-waited:
		t.Fatalf("testserver: mcptestserver exited before listening; stderr:\n%s", p.Stderr())
	case <-ctx.Done():
		t.Fatalf("testserver: mcptestserver did not announce its URL; stderr:\n%s", p.Stderr())
	}
	return nil
}
