package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent/internal/fakeopenai"
)

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
	section("tools", "mcpadapter tools", tools.WaitFor("math_divide"))

	count := newTmux(t, dir, "mcpadapter call math_count --arg to=40 --arg delay_ms=60")
	// Any count on the way (each shows for 60 ms: a loaded machine may
	// not read the screen while one given count is up).
	mid := count.WaitForMatch(regexp.MustCompile(`counted ([1-9]|[1-3][0-9])\b`))
	section("call, while the progress bar runs", "mcpadapter call math_count --arg to=40 --arg delay_ms=60", mid)
	section("call, when it is done", "mcpadapter call math_count --arg to=40 --arg delay_ms=60", count.WaitFor("counted to 40"))
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
	agent.WaitFor("tools from demo")
	agent.Send("What is 2+3? Also subscribe me to Paris weather alerts.", "Enter")
	agent.WaitFor("Respond?")
	agent.Send("a", "Enter")
	agent.WaitFor("Email address")
	agent.Send("ada@example.com", "Enter")
	agent.WaitFor("frequency")
	agent.Send("Enter")
	final := agent.WaitFor("2 + 3 = 5, and you will get daily weather alerts")
	section("agent (the chat model is a scripted OpenAI-compatible server on loopback; no LLM is reachable here)", agentCmd, final)
	agent.Send("C-d")

	if os.Getenv("MCPADAPTER_WRITE_TRANSCRIPT") == "1" {
		text := "# mcpadapter on its demo servers: a terminal transcript\n\n" +
			"Captured from a 120x40 tmux pane by `MCPADAPTER_WRITE_TRANSCRIPT=1 go test -run TestTranscript ./cmd/mcpadapter/mcpadapter-agent`.\n\n" + doc.String()
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "transcript.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
