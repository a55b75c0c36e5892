package clitest

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// Terminal is a command running in a real terminal (a tmux pane).
type Terminal struct {
	t       *testing.T
	session string
}

// Tmux runs command in a new 120x40 tmux pane, in dir (also its HOME),
// with binDir first on PATH; the pane goes when the test ends.
func Tmux(t *testing.T, dir, binDir, command string) *Terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		testenv.Missing(t, "tmux is needed for this test (apt-get install tmux; .ci/run installs it)")
	}
	s := fmt.Sprintf("mcpadapter-%d", time.Now().UnixNano())
	shell := fmt.Sprintf("cd %q && export HOME=%q PATH=%q:$PATH && %s; sleep 60", dir, dir, binDir, command)
	// A tmux server that is just exiting (the previous test killed its last
	// session) can refuse a new session: try again a few times.
	for try := 0; ; try++ {
		out, err := exec.Command("tmux", "new-session", "-d", "-s", s, "-x", "120", "-y", "40", shell).CombinedOutput()
		if err == nil {
			break
		}
		if try == 4 {
			t.Fatalf("tmux: %v %s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", s).Run() })
	return &Terminal{t: t, session: s}
}

// Screen returns what the pane shows.
func (m *Terminal) Screen() string {
	out, _ := exec.Command("tmux", "capture-pane", "-p", "-t", m.session).Output()
	return strings.TrimRight(string(out), "\n ")
}

// WaitFor waits up to 20 s for the pane to show s and returns the screen;
// it fails the test if it never does.
func (m *Terminal) WaitFor(s string) string {
	m.t.Helper()
	return m.waitUntil(fmt.Sprintf("%q", s), func(sc string) bool { return strings.Contains(sc, s) })
}

// WaitForMatch is WaitFor for a screen that matches re: for a line that
// changes faster than the screen can be read (a progress line).
func (m *Terminal) WaitForMatch(re *regexp.Regexp) string {
	m.t.Helper()
	return m.waitUntil(re.String(), re.MatchString)
}

// waitUntil waits up to 20 s for a screen that ok accepts; what names it
// for the failure.
func (m *Terminal) waitUntil(what string, ok func(string) bool) string {
	m.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sc := m.Screen()
		if ok(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the terminal never showed %s:\n%s", what, sc)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// Send types keys into the pane (tmux send-keys names: "Enter", "C-d").
func (m *Terminal) Send(keys ...string) {
	m.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", m.session}, keys...)...).CombinedOutput(); err != nil {
		m.t.Fatalf("send-keys: %v %s", err, out)
	}
}
