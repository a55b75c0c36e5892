package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/fakeopenai"
)

// tmuxTerm is a command running in a real terminal (a tmux pane).
type tmuxTerm struct {
	t       *testing.T
	session string
}

func newTmux(t *testing.T, dir, command string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for this test (apt-get install tmux); .ci/run installs it")
	}
	s := fmt.Sprintf("mcpadapter-%d", time.Now().UnixNano())
	shell := fmt.Sprintf("cd %q && export HOME=%q PATH=%q:$PATH && %s; sleep 60", dir, dir, filepath.Dir(bin), command)
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
	return &tmuxTerm{t: t, session: s}
}

func (m *tmuxTerm) screen() string {
	out, _ := exec.Command("tmux", "capture-pane", "-p", "-t", m.session).Output()
	return strings.TrimRight(string(out), "\n ")
}

func (m *tmuxTerm) waitFor(s string) string {
	m.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sc := m.screen()
		if strings.Contains(sc, s) {
			return sc
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the terminal never showed %q:\n%s", s, sc)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func (m *tmuxTerm) send(keys ...string) {
	m.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", m.session}, keys...)...).CombinedOutput(); err != nil {
		m.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// TestTranscript runs tools, call (with its progress bar) and agent on the
// demo in a real terminal. With MCPADAPTER_WRITE_TRANSCRIPT=1 it writes
// what the terminal showed to docs/transcript.txt.
func TestTranscript(t *testing.T) {
	dir := t.TempDir()
	var doc strings.Builder
	section := func(title, command, screen string) {
		fmt.Fprintf(&doc, "## %s\n\n$ %s\n%s\n\n", title, command, screen)
	}

	tools := newTmux(t, dir, "mcpadapter tools")
	section("tools", "mcpadapter tools", tools.waitFor("math_divide"))

	count := newTmux(t, dir, "mcpadapter call math_count --arg to=40 --arg delay_ms=60")
	mid := count.waitFor("counted 15")
	section("call, while the progress bar runs", "mcpadapter call math_count --arg to=40 --arg delay_ms=60", mid)
	section("call, when it is done", "mcpadapter call math_count --arg to=40 --arg delay_ms=60", count.waitFor("counted to 40"))
	if !strings.Contains(mid, "[#") && !strings.Contains(mid, "[-") {
		t.Errorf("no progress bar on the terminal:\n%s", mid)
	}

	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{
			{Name: "math_add", Arguments: `{"a":2,"b":3}`},
			{Name: "weather_subscribe", Arguments: `{"city":"Paris"}`},
		}},
		fakeopenai.Turn{Content: "2 + 3 = 5, and you will get daily weather alerts for Paris at ada@example.com."},
	)
	agentCmd := fmt.Sprintf("mcpadapter agent --model scripted-model --base-url %s", fake.URL)
	agent := newTmux(t, dir, agentCmd)
	agent.waitFor("tools from demo")
	agent.send("What is 2+3? Also subscribe me to Paris weather alerts.", "Enter")
	agent.waitFor("Respond?")
	agent.send("a", "Enter")
	agent.waitFor("Email address")
	agent.send("ada@example.com", "Enter")
	agent.waitFor("frequency")
	agent.send("Enter")
	final := agent.waitFor("2 + 3 = 5, and you will get daily weather alerts")
	section("agent (the chat model is a scripted OpenAI-compatible server on loopback; no LLM is reachable here)", agentCmd, final)
	agent.send("C-d")

	if os.Getenv("MCPADAPTER_WRITE_TRANSCRIPT") == "1" {
		text := "# mcpadapter on its demo servers: a terminal transcript\n\n" +
			"Captured from a 120x40 tmux pane by `MCPADAPTER_WRITE_TRANSCRIPT=1 go test -run TestTranscript ./cmd/mcpadapter`.\n\n" + doc.String()
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "transcript.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
