package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serveProc is an `mcpadapter serve` process a test started: where it
// listens, what it prints, and its end.
type serveProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	URL    string      // the endpoint it said it listens on
	stdout *lineWaiter // its standard output
	stderr *lineWaiter // its standard error
	read   int         // lines of stdout next has gone past
	done   chan struct{}
	err    error // how it ended, once done is closed
}

// startServe starts `mcpadapter serve args...` in dir, with HOME=dir and
// env added to the test's environment, and waits up to a minute for it
// to say where it listens. The test's end kills it.
func startServe(t *testing.T, dir string, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HOME="+dir), env...)
	p := &serveProc{t: t, cmd: cmd, stdout: &lineWaiter{t: t}, stderr: &lineWaiter{t: t}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	_, rest, _ := strings.Cut(p.next("listening on "), "listening on ")
	p.URL = strings.Fields(rest)[0]
	return p
}

// next waits up to a minute for a line of standard output, after the
// lines it went past before, that holds s, and returns it.
func (p *serveProc) next(s string) string {
	p.t.Helper()
	deadline := time.After(time.Minute)
	for {
		ended := false
		select {
		case <-p.done: // its output is whole
			ended = true
		default:
		}
		lines := strings.Split(p.stdout.String(), "\n")
		whole := len(lines) - 1 // the last line may be half written
		if ended {
			whole = len(lines)
		}
		for ; p.read < whole; p.read++ {
			if strings.Contains(lines[p.read], s) {
				p.read++
				return lines[p.read-1]
			}
		}
		if ended {
			p.t.Fatalf("serve ended (%v) before it printed %q:\n%s\n%s", p.err, s, p.stdout, p.stderr)
		}
		select {
		case <-p.done:
		case <-deadline:
			p.t.Fatalf("serve printed no %q in a minute:\n%s\n%s", s, p.stdout, p.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends sig and waits up to 30 s for serve to end, returning how it
// ended.
func (p *serveProc) stop(sig os.Signal) error {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(30 * time.Second):
		p.t.Fatalf("serve did not end on %v:\n%s\n%s", sig, p.stdout, p.stderr)
		return nil
	}
}
