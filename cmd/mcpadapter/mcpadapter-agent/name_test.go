package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent/internal/fakeopenai"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestAgentServerNameOneStart: the agent starts a command target once and
// names it as the server names itself.
func TestAgentServerNameOneStart(t *testing.T) {
	count := filepath.Join(t.TempDir(), "starts")
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "echo", Arguments: `{"text":"hi"}`}}},
		fakeopenai.Turn{Content: "done"},
	)
	r := cli(t, "", "agent", "--model", "m", "--base-url", fake.URL, "--once", "echo hi", "--",
		"/bin/sh", "-c", `echo start >> "$0"; exec "$@"`, count, testserver.Build(t), "-era", "legacy", "-name", "echo.server")
	r.Must(t, 0, []string{"done"}, []string{"tools from echo_server", "← echo: "})
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "start\n"); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}
}
