package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/clitest"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent/internal/fakeopenai"
)

// bin is the mcpadapter program, with the agent program next to it, both
// built once by TestMain: the tests run "mcpadapter agent" as a user does.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpadapter-agent")
	if err != nil {
		panic(err)
	}
	if bin, err = clitest.Build(dir, "mcpadapter", "github.com/mcpadapter/mcpadapter/cmd/mcpadapter"); err != nil {
		panic(err)
	}
	if _, err = clitest.Build(dir, "mcpadapter-agent", "."); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs mcpadapter in a fresh directory with a fresh HOME.
func cli(t *testing.T, stdin string, args ...string) clitest.Result {
	t.Helper()
	return clitest.Run(t, bin, t.TempDir(), stdin, nil, args...)
}

// newTmux runs command in a real terminal, with mcpadapter on PATH.
func newTmux(t *testing.T, dir, command string) *clitest.Terminal {
	t.Helper()
	return clitest.Tmux(t, dir, filepath.Dir(bin), command)
}

func TestAgentOnce(t *testing.T) {
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "math_add", Arguments: `{"a":2,"b":3}`}, {Name: "weather_forecast", Arguments: `{"city":"Rome","days":1}`}}},
		fakeopenai.Turn{Content: "2+3 is 5, and Rome looks fine."},
	)
	r := cli(t, "", "agent", "--model", "test-model", "--base-url", fake.URL, "--api-key", "sk-test", "--once", "What is 2+3? And the weather in Rome?")
	r.Must(t, 0, []string{"2+3 is 5, and Rome looks fine."}, []string{"→ math_add(", "← math_add: ", "→ weather_forecast(", "← weather_forecast: Rome:"})
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Authorization != "Bearer sk-test" || len(reqs[0].Tools) != 5 {
		t.Fatalf("requests %+v", reqs)
	}
	var sawSum bool
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" && strings.Contains(m.Content, `"result":5`) {
			sawSum = true
		}
	}
	if !sawSum {
		t.Errorf("the model was not sent the tool result: %+v", reqs[1].Messages)
	}
}

func TestAgentToolErrorDoesNotAbort(t *testing.T) {
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "math_divide", Arguments: `{"a":1,"b":0}`}}},
		fakeopenai.Turn{Content: "Dividing by zero is not possible."},
	)
	cli(t, "", "agent", "--model", "m", "--base-url", fake.URL, "--once", "1/0?").Must(t, 0,
		[]string{"Dividing by zero is not possible."}, []string{"← math_divide: error: division by zero"})
}

func TestAgentElicitationPipe(t *testing.T) {
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "weather_subscribe", Arguments: `{"city":"Lima"}`}}},
		fakeopenai.Turn{Content: "You are subscribed."},
	)
	r := cli(t, "a\ncy@example.com\n2\n", "agent", "--model", "m", "--base-url", fake.URL, "--once", "Subscribe me to Lima alerts")
	r.Must(t, 0, []string{"You are subscribed."}, []string{"Where should alerts for Lima go?", "← weather_subscribe: Subscribed cy@example.com to weekly alerts for Lima."})
}

// TestAgentTerminal drives the interactive agent in a real terminal (tmux):
// a question, the server's form answered field by field, the final answer.
func TestAgentTerminal(t *testing.T) {
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "weather_subscribe", Arguments: `{"city":"Quito"}`}}},
		fakeopenai.Turn{Content: "Done: alerts for Quito are on."},
	)
	term := newTmux(t, t.TempDir(), fmt.Sprintf("mcpadapter agent --model m --base-url %q", fake.URL))
	term.WaitFor("tools from demo")
	term.Send("Subscribe me to Quito alerts", "Enter")
	term.WaitFor("Respond?")
	term.Send("a", "Enter")
	term.WaitFor("Email address")
	term.Send("dee@example.com", "Enter")
	term.WaitFor("frequency")
	term.Send("Enter")
	screen := term.WaitFor("Done: alerts for Quito are on.")
	if !strings.Contains(screen, "Subscribed dee@example.com to daily alerts for Quito.") {
		t.Errorf("the tool result is not on screen:\n%s", screen)
	}
	term.Send("C-d")
}

// TestAgentUsage: the agent's usage errors are one line pointing to its
// help, and its help and exit status come through "mcpadapter agent".
func TestAgentUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent"}, "--model is required"},
		{[]string{"-v", "agent", "--frobnicate"}, "unknown flag: --frobnicate"},
		{[]string{"agent", "--model", "m", "--timeout", "soon"}, "--timeout"},
	} {
		r := cli(t, "", tc.args...)
		r.Must(t, 2, nil, []string{tc.want, "Run 'mcpadapter agent --help' for usage."})
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "mcpadapter: ") {
			t.Errorf("%v: stderr is not one message and the hint:\n%s", tc.args, r.Stderr)
		}
	}
	cli(t, "", "agent", "--help").Must(t, 0,
		[]string{"Usage:", "mcpadapter agent [TARGET | -- COMMAND ARGS...] --model NAME [flags]", "Examples:", "--base-url", "--config"}, nil)
}

// TestAgentFromWorkspace: with no agent program installed, "mcpadapter
// agent" run inside this repository's Go workspace builds the agent from
// source and runs it, its exit status unchanged.
func TestAgentFromWorkspace(t *testing.T) {
	gowork := goEnv(t, "GOWORK")
	if gowork == "" || gowork == "off" {
		t.Skip("not in a Go workspace (go.work)")
	}
	// mcpadapter alone, and a PATH without the agent program.
	lone := filepath.Join(t.TempDir(), "mcpadapter")
	if err := os.Link(bin, lone); err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "mcpadapter-agent")); err != nil {
			path = append(path, d)
		}
	}
	env := []string{
		"HOME=" + os.Getenv("HOME"), "PATH=" + strings.Join(path, string(filepath.ListSeparator)),
		"XDG_CACHE_HOME=" + t.TempDir(), "GOCACHE=" + goEnv(t, "GOCACHE"),
	}
	root := filepath.Dir(gowork)
	r := clitest.Run(t, lone, root, "", env, "agent", "--help")
	r.Must(t, 0, []string{"--base-url"}, []string{"mcpadapter-agent is not installed; building it from this workspace"})
	r = clitest.Run(t, lone, root, "", env, "agent")
	r.Must(t, 2, nil, []string{"mcpadapter: --model is required"})
	if strings.Contains(r.Stderr, "building") {
		t.Errorf("built again:\n%s", r.Stderr)
	}
}

// goEnv returns the go command's value of the environment variable key.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}
