package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/fakeopenai"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// bin is the mcpadapter binary under test, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpadapter-cli")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "mcpadapter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		panic(fmt.Sprintf("building the CLI: %v\n%s", err, out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the CLI produced.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the binary in a fresh directory with a fresh HOME (so no config
// is found unless the test writes one) and returns what it printed.
func cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return cliIn(t, t.TempDir(), stdin, args...)
}

func cliIn(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	return cliRun(t, dir, stdin, nil, args...)
}

// cliEnv is cliIn with extra environment variables and no stdin.
func cliEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return cliRun(t, dir, "", env, args...)
}

func cliRun(t *testing.T, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "OPENAI_API_KEY=", "MCP_TOKEN=")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

func (r result) must(t *testing.T, code int, stdout, stderr []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range stdout {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	for _, s := range stderr {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		t.Errorf("a Go stack trace on stderr:\n%s", r.stderr)
	}
}

func TestDemoTools(t *testing.T) {
	cli(t, "", "tools").must(t, 0,
		[]string{"weather_forecast", "weather_subscribe", "math_add", "math_count", "2026-07-28 (discover)", "2025-11-25 (handshake)"},
		[]string{"built-in demo servers"})
	r := cli(t, "", "tools", "--json")
	var tools []struct {
		Name, OriginalName, Server string
		InputSchema                json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) != 5 {
		t.Fatalf("--json: %v, %d tools\n%s", err, len(tools), r.stdout)
	}
	if !strings.Contains(string(tools[0].InputSchema), `"city"`) {
		t.Errorf("schema %s", tools[0].InputSchema)
	}
}

func TestDemoCall(t *testing.T) {
	cli(t, "", "call", "math_add", `{"a":2,"b":3}`).must(t, 0, []string{`{"result":5}`}, nil)
	cli(t, "", "call", "weather_forecast", "--arg", "city=Paris", "--arg", "days=2").must(t, 0,
		[]string{"Paris: day 1", "structured content:", `"days": [`}, nil)
	cli(t, "", "call", "math_divide", "--arg", "a=1", "--arg", "b=0").must(t, 1, nil, []string{"reported an error", "division by zero"})
	r := cli(t, "", "call", "math_nope")
	r.must(t, 2, nil, []string{`no tool "math_nope"; the tools are: math_add`})
	for _, line := range strings.Split(r.stderr, "\n") {
		if line != "" && !strings.HasPrefix(line, "mcpadapter: ") && !strings.HasPrefix(line, "Run 'mcpadapter --help'") {
			t.Errorf("stderr has more than one-line messages:\n%s", r.stderr)
		}
	}
	cli(t, "", "call", "math_add", `{"a":`).must(t, 2, nil, []string{"not a JSON object"})
	cli(t, "", "call", "math_add", "--arg", "novalue").must(t, 2, nil, []string{"want key=value"})
}

func TestCallProgressBar(t *testing.T) {
	cli(t, "", "call", "math_count", "--arg", "to=3", "--arg", "delay_ms=10").must(t, 0,
		[]string{"counted to 3"}, []string{"math_count: 1/3 counted 1", "math_count: 3/3 counted 3"})
}

func TestCallElicitation(t *testing.T) {
	// Answers at the prompt: accept, an email, Enter for the default frequency.
	cli(t, "a\nada@example.com\n\n", "call", "weather_subscribe", "--arg", "city=Oslo").must(t, 0,
		[]string{"Subscribed ada@example.com to daily alerts for Oslo."},
		[]string{`Tool "weather_subscribe" needs your input`, "Where should alerts for Oslo go?"})
	// A bad email is refused and asked again.
	cli(t, "a\nnot-an-email\nbo@example.com\n2\n", "call", "weather_subscribe", "--arg", "city=Oslo").must(t, 0,
		[]string{"Subscribed bo@example.com to weekly alerts"}, []string{"not an email address"})
	cli(t, "d\n", "call", "weather_subscribe", "--arg", "city=Oslo").must(t, 0, []string{"Not subscribed (decline)"}, nil)
}

// writeConfig writes an mcpServers config into dir.
func writeConfig(t *testing.T, dir, name, doc string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigStdioAndHTTP(t *testing.T) {
	srv, state := testserver.NewWithState(testserver.Options{Name: "web"})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	dir := t.TempDir()
	writeConfig(t, dir, ".mcp.json", fmt.Sprintf(`{"mcpServers": {
		"local": {"command": %q, "args": ["-era", "legacy"]},
		"web": {"url": %q, "headers": {"X-Team": "cli"}}
	}}`, testserver.Build(t), url))
	cliIn(t, dir, "", "tools").must(t, 0, []string{"local_echo", "web_echo", "local_image"}, nil)
	cliIn(t, dir, "", "call", "web_headers").must(t, 0, []string{`"X-Team":["cli"]`}, nil)
	if state.Calls("headers") != 1 {
		t.Errorf("the web server saw %d calls", state.Calls("headers"))
	}
	r := cliIn(t, dir, "", "call", "local_image", "--out-dir", "media")
	r.must(t, 0, []string{"[image image/png, 67 bytes, saved to media/local_image-1.png]"}, nil)
	png, err := os.ReadFile(filepath.Join(dir, "media", "local_image-1.png"))
	if err != nil || !bytes.Equal(png, testserver.TinyPNG) {
		t.Errorf("saved image: %v", err)
	}
	cliIn(t, dir, "", "inspect").must(t, 0, []string{"server local", "2025-11-25 (handshake era)", "server web", "pulled down to the handshake era by local"}, nil)
}

func TestInspectTrace(t *testing.T) {
	r := cli(t, "", "inspect", "--trace")
	r.must(t, 0, []string{"server weather", "2026-07-28 (discover era)", "server math", "2025-11-25 (handshake era)", "tools:        3"},
		[]string{`weather → {"id":1,"jsonrpc":"2.0","method":"server/discover"`, `math ← `, `"method":"initialize"`})
}

func TestTargets(t *testing.T) {
	path, args, env := testenv.EverythingStdio(t)
	_ = env
	r := cli(t, "", append([]string{"tools", "--"}, append([]string{path}, args...)...)...)
	r.must(t, 0, []string{"echo", "get-sum", "2025-11-25 (handshake)"}, nil)
	cli(t, "", append([]string{"call", "echo", `{"message":"hi"}`, "--"}, append([]string{path}, args...)...)...).must(t, 0, []string{"Echo: hi"}, nil)

	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	cli(t, "", "call", "--target", url, "echo", `{"text":"via url"}`).must(t, 0, []string{"via url"}, nil)
	cli(t, "", "tools", url).must(t, 0, []string{"echo", "2026-07-28 (discover)"}, nil)
}

func TestErrorsAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "ftp://example.com/mcp"}, "only http and https"},
		{[]string{"tools", "no-such-file.py"}, "neither an http(s) URL nor a file"},
		{[]string{"tools", "--", "/no/such/server"}, "/no/such/server"},
		{[]string{"tools", "--config", "missing.json"}, "missing.json"},
		{[]string{"tools", "http://127.0.0.1:1/mcp"}, "127.0.0.1:1"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"call", "--timeout", "soon", "math_add"}, "--timeout"},
		{[]string{"agent"}, "--model is required"},
	} {
		r := cli(t, "", tc.args...)
		r.must(t, 2, nil, []string{tc.want})
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		last := lines[len(lines)-1]
		if strings.HasPrefix(last, "Run 'mcpadapter --help'") {
			last = lines[len(lines)-2]
		}
		if !strings.HasPrefix(last, "mcpadapter: ") {
			t.Errorf("%v: last line %q", tc.args, last)
		}
	}
	dir := t.TempDir()
	writeConfig(t, dir, ".mcp.json", `{"mcpServers": {"w": {"url": "ftp://x"}}}`)
	cliIn(t, dir, "", "tools").must(t, 2, nil, []string{"mcpServers.w.url: not an http(s) URL"})
}

func TestHelpAndVersion(t *testing.T) {
	for _, c := range []string{"tools", "call", "inspect", "agent", "demo-server"} {
		cli(t, "", c, "--help").must(t, 0, []string{"Usage:", "Examples:"}, nil)
	}
	cli(t, "", "version").must(t, 0, []string{"mcpadapter 0."}, nil)
	cli(t, "", "completion", "bash").must(t, 0, []string{"bash completion"}, nil)
}

func TestAgentOnce(t *testing.T) {
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "math_add", Arguments: `{"a":2,"b":3}`}, {Name: "weather_forecast", Arguments: `{"city":"Rome","days":1}`}}},
		fakeopenai.Turn{Content: "2+3 is 5, and Rome looks fine."},
	)
	r := cli(t, "", "agent", "--model", "test-model", "--base-url", fake.URL, "--api-key", "sk-test", "--once", "What is 2+3? And the weather in Rome?")
	r.must(t, 0, []string{"2+3 is 5, and Rome looks fine."}, []string{"→ math_add(", "← math_add: ", "→ weather_forecast(", "← weather_forecast: Rome:"})
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
	cli(t, "", "agent", "--model", "m", "--base-url", fake.URL, "--once", "1/0?").must(t, 0,
		[]string{"Dividing by zero is not possible."}, []string{"← math_divide: error: division by zero"})
}

func TestAgentElicitationPipe(t *testing.T) {
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "weather_subscribe", Arguments: `{"city":"Lima"}`}}},
		fakeopenai.Turn{Content: "You are subscribed."},
	)
	r := cli(t, "a\ncy@example.com\n2\n", "agent", "--model", "m", "--base-url", fake.URL, "--once", "Subscribe me to Lima alerts")
	r.must(t, 0, []string{"You are subscribed."}, []string{"Where should alerts for Lima go?", "← weather_subscribe: Subscribed cy@example.com to weekly alerts for Lima."})
}

// TestAgentTerminal drives the interactive agent in a real terminal (tmux):
// a question, the server's form answered field by field, the final answer.
func TestAgentTerminal(t *testing.T) {
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "weather_subscribe", Arguments: `{"city":"Quito"}`}}},
		fakeopenai.Turn{Content: "Done: alerts for Quito are on."},
	)
	term := newTmux(t, t.TempDir(), fmt.Sprintf("mcpadapter agent --model m --base-url %q", fake.URL))
	term.waitFor("tools from demo")
	term.send("Subscribe me to Quito alerts", "Enter")
	term.waitFor("Respond?")
	term.send("a", "Enter")
	term.waitFor("Email address")
	term.send("dee@example.com", "Enter")
	term.waitFor("frequency")
	term.send("Enter")
	screen := term.waitFor("Done: alerts for Quito are on.")
	if !strings.Contains(screen, "Subscribed dee@example.com to daily alerts for Quito.") {
		t.Errorf("the tool result is not on screen:\n%s", screen)
	}
	term.send("C-d")
}

// TestOAuthSignIn: --oauth prints the authorization URL, serves the
// redirect on loopback, and keeps the token in the token file, so the next
// run does not ask again.
func TestOAuthSignIn(t *testing.T) {
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "tools", "--oauth", as.MCPURL)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "MCP_TOKEN=", "MCPADAPTER_TOKEN_FILE=")
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var printed strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		printed.WriteString(line + "\n")
		if strings.HasPrefix(line, as.URL+"/authorize?") {
			// The user's browser.
			resp, err := http.Get(line)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(page), "Signed in") {
				t.Errorf("the browser got: %s", page)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\nstderr:\n%s\nstdout:\n%s", err, printed.String(), out.String())
	}
	if !strings.Contains(printed.String(), "Open this URL in a browser") || !strings.Contains(out.String(), "echo") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", printed.String(), out.String())
	}
	tokens, err := os.ReadFile(filepath.Join(dir, ".config", "mcpadapter", "tokens.json"))
	if err != nil || !strings.Contains(string(tokens), as.MCPURL) {
		t.Fatalf("token file: %v", err)
	}

	// The next run uses the stored token.
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, ".config")}
	r := cliEnv(t, dir, env, "call", "--oauth", "--target", as.MCPURL, "echo", `{"text":"again"}`)
	r.must(t, 0, []string{"again"}, nil)
	if strings.Contains(r.stderr, "Open this URL") {
		t.Errorf("asked to sign in again:\n%s", r.stderr)
	}
	if c := as.Counts(); c.CodeExchanges != 1 {
		t.Errorf("server counts %+v", c)
	}

	// A config server with "auth": "oauth" uses the same token file.
	writeConfig(t, dir, ".mcp.json", fmt.Sprintf(`{"mcpServers": {"secured": {"url": %q, "auth": "oauth"}}}`, as.MCPURL))
	cliEnv(t, dir, env, "tools").must(t, 0, []string{"echo"}, nil)
	cliEnv(t, dir, env, "tools", "--oauth").must(t, 2, nil, []string{"--oauth apply to a URL target"})
}
