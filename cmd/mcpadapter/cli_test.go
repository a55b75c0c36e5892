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

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/clitest"
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
	if bin, err = clitest.Build(dir, "mcpadapter", "."); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the CLI produced.
type result = clitest.Result

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
	return clitest.Run(t, bin, dir, stdin, env, args...)
}

func TestDemoTools(t *testing.T) {
	cli(t, "", "tools").Must(t, 0,
		[]string{"weather_forecast", "weather_subscribe", "math_add", "math_count", "2026-07-28 (discover)", "2025-11-25 (handshake)"},
		[]string{"built-in demo servers"})
	r := cli(t, "", "tools", "--json")
	var tools []struct {
		Name, OriginalName, Server string
		InputSchema                json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &tools); err != nil || len(tools) != 5 {
		t.Fatalf("--json: %v, %d tools\n%s", err, len(tools), r.Stdout)
	}
	if !strings.Contains(string(tools[0].InputSchema), `"city"`) {
		t.Errorf("schema %s", tools[0].InputSchema)
	}
}

func TestDemoCall(t *testing.T) {
	cli(t, "", "call", "math_add", `{"a":2,"b":3}`).Must(t, 0, []string{`{"result":5}`}, nil)
	cli(t, "", "call", "weather_forecast", "--arg", "city=Paris", "--arg", "days=2").Must(t, 0,
		[]string{"Paris: day 1", "structured content:", `"days": [`}, nil)
	cli(t, "", "call", "math_divide", "--arg", "a=1", "--arg", "b=0").Must(t, 1, nil, []string{"reported an error", "division by zero"})
	r := cli(t, "", "call", "math_nope")
	r.Must(t, 2, nil, []string{`no tool "math_nope"; the tools are: math_add`})
	for _, line := range strings.Split(r.Stderr, "\n") {
		if line != "" && !strings.HasPrefix(line, "mcpadapter: ") && !strings.HasPrefix(line, "Run 'mcpadapter --help'") {
			t.Errorf("stderr has more than one-line messages:\n%s", r.Stderr)
		}
	}
	cli(t, "", "call", "math_add", `{"a":`).Must(t, 2, nil, []string{"not a JSON object"})
	cli(t, "", "call", "math_add", "--arg", "novalue").Must(t, 2, nil, []string{"want key=value"})
}

func TestCallProgressBar(t *testing.T) {
	cli(t, "", "call", "math_count", "--arg", "to=3", "--arg", "delay_ms=10").Must(t, 0,
		[]string{"counted to 3"}, []string{"math_count: 1/3 counted 1", "math_count: 3/3 counted 3"})
}

func TestCallElicitation(t *testing.T) {
	// Answers at the prompt: accept, an email, Enter for the default frequency.
	cli(t, "a\nada@example.com\n\n", "call", "weather_subscribe", "--arg", "city=Oslo").Must(t, 0,
		[]string{"Subscribed ada@example.com to daily alerts for Oslo."},
		[]string{`Tool "weather_subscribe" needs your input`, "Where should alerts for Oslo go?"})
	// A bad email is refused and asked again.
	cli(t, "a\nnot-an-email\nbo@example.com\n2\n", "call", "weather_subscribe", "--arg", "city=Oslo").Must(t, 0,
		[]string{"Subscribed bo@example.com to weekly alerts"}, []string{"not an email address"})
	cli(t, "d\n", "call", "weather_subscribe", "--arg", "city=Oslo").Must(t, 0, []string{"Not subscribed (decline)"}, nil)
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
	cliIn(t, dir, "", "tools").Must(t, 0, []string{"local_echo", "web_echo", "local_image"}, nil)
	cliIn(t, dir, "", "call", "web_headers").Must(t, 0, []string{`"X-Team":["cli"]`}, nil)
	if state.Calls("headers") != 1 {
		t.Errorf("the web server saw %d calls", state.Calls("headers"))
	}
	r := cliIn(t, dir, "", "call", "local_image", "--out-dir", "media")
	r.Must(t, 0, []string{"[image image/png, 67 bytes, saved to media/local_image-1.png]"}, nil)
	png, err := os.ReadFile(filepath.Join(dir, "media", "local_image-1.png"))
	if err != nil || !bytes.Equal(png, testserver.TinyPNG) {
		t.Errorf("saved image: %v", err)
	}
	cliIn(t, dir, "", "inspect").Must(t, 0, []string{"server local", "2025-11-25 (handshake era)", "server web",
		"protocol era of the group (local, web): handshake (pulled down to the handshake era by local)"}, nil)
}

// TestInspectEras: the demo's two servers are separate adapters, each with
// its own era, and inspect says so; it names no era of the whole, and a
// group era only for a config's group.
func TestInspectEras(t *testing.T) {
	r := cli(t, "", "inspect")
	r.Must(t, 0, []string{"source: demo\nprotocol eras: one per server (separate adapters, each negotiating its own)\n",
		"server weather\n  transport:    streamable-http\n  protocol:     2026-07-28 (discover era)",
		"server math\n  transport:    stdio\n  protocol:     2025-11-25 (handshake era)"}, nil)
	if strings.Contains(r.Stdout, "of the whole") || strings.Contains(r.Stdout, "of the group") {
		t.Errorf("inspect of the demo names an era for both servers:\n%s", r.Stdout)
	}
	// One server: its era, and nothing about groups.
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	r = cli(t, "", "inspect", url)
	r.Must(t, 0, []string{"protocol:     2026-07-28 (discover era)"}, nil)
	if strings.Contains(r.Stdout, "protocol era") {
		t.Errorf("inspect of one server:\n%s", r.Stdout)
	}
}

func TestInspectTrace(t *testing.T) {
	r := cli(t, "", "inspect", "--trace")
	r.Must(t, 0, []string{"server weather", "2026-07-28 (discover era)", "server math", "2025-11-25 (handshake era)", "tools:        3"},
		[]string{`weather → {"id":1,"jsonrpc":"2.0","method":"server/discover"`, `math ← `, `"method":"initialize"`})
}

func TestTargets(t *testing.T) {
	path, args, env := testenv.EverythingStdio(t)
	_ = env
	r := cli(t, "", append([]string{"tools", "--"}, append([]string{path}, args...)...)...)
	r.Must(t, 0, []string{"echo", "get-sum", "2025-11-25 (handshake)"}, nil)
	cli(t, "", append([]string{"call", "echo", `{"message":"hi"}`, "--"}, append([]string{path}, args...)...)...).Must(t, 0, []string{"Echo: hi"}, nil)

	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	cli(t, "", "call", "--target", url, "echo", `{"text":"via url"}`).Must(t, 0, []string{"via url"}, nil)
	cli(t, "", "tools", url).Must(t, 0, []string{"echo", "2026-07-28 (discover)"}, nil)
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
	} {
		r := cli(t, "", tc.args...)
		r.Must(t, 2, nil, []string{tc.want})
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
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
	cliIn(t, dir, "", "tools").Must(t, 2, nil, []string{"mcpServers.w.url: not an http(s) URL"})
}

// TestConfigErrorsAll: a config with several problems gets every one of
// them, each on its own line naming file, position and JSON path, with or
// without -v.
func TestConfigErrorsAll(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, ".mcp.json", `{"mcpServers": {
  "a": {"url": "ftp://x"},
  "b": {"command": 5},
  "c": {"url": "http://127.0.0.1:1/mcp", "timeout": "soon"}
}}`)
	want := []string{
		"mcpadapter: .mcp.json:2:16: mcpServers.a.url: not an http(s) URL",
		"mcpadapter: .mcp.json:3:20: mcpServers.b.command: want a string, not a number",
		"mcpadapter: .mcp.json:4:53: mcpServers.c.timeout: want a number of seconds",
	}
	for _, args := range [][]string{{"tools"}, {"-v", "tools"}, {"call", "a_echo"}} {
		r := cliIn(t, dir, "", args...)
		r.Must(t, 2, nil, want)
		if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != len(want) {
			t.Errorf("%v: %d lines, want one a problem:\n%s", args, len(lines), r.Stderr)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, c := range []string{"tools", "call", "inspect", "agent", "demo-server"} {
		cli(t, "", c, "--help").Must(t, 0, []string{"Usage:", "Examples:"}, nil)
	}
	cli(t, "", "version").Must(t, 0, []string{"mcpadapter ", "(library ", "MCP go-sdk v1.8.0; protocols 2026-07-28"}, nil)
	cli(t, "", "completion", "bash").Must(t, 0, []string{"bash completion"}, nil)
}

// TestAgentNotInstalled: with no mcpadapter-agent next to mcpadapter, on
// PATH or in a workspace, "mcpadapter agent" says how to install it, and its
// help still works.
func TestAgentNotInstalled(t *testing.T) {
	env := []string{"PATH=" + t.TempDir()}
	cliEnv(t, t.TempDir(), env, "agent", "--model", "m").Must(t, 2, nil,
		[]string{"mcpadapter: the agent command needs mcpadapter-agent", "go install github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent@latest"})
	cliEnv(t, t.TempDir(), env, "agent", "--help").Must(t, 0,
		[]string{"mcpadapter agent [TARGET | -- COMMAND ARGS...] --model NAME", "Examples:", "go install"}, nil)
	cli(t, "", "--help").Must(t, 0, []string{"  agent ", "Chat with an LLM agent"}, nil)
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
	r.Must(t, 0, []string{"again"}, nil)
	if strings.Contains(r.Stderr, "Open this URL") {
		t.Errorf("asked to sign in again:\n%s", r.Stderr)
	}
	if c := as.Counts(); c.CodeExchanges != 1 {
		t.Errorf("server counts %+v", c)
	}

	// A config server with "auth": "oauth" uses the same token file.
	writeConfig(t, dir, ".mcp.json", fmt.Sprintf(`{"mcpServers": {"secured": {"url": %q, "auth": "oauth"}}}`, as.MCPURL))
	cliEnv(t, dir, env, "tools").Must(t, 0, []string{"echo"}, nil)
	cliEnv(t, dir, env, "tools", "--oauth").Must(t, 2, nil, []string{"--oauth apply to a URL target"})
}

// TestSkills lists a server's skills and loads one, checked.
func TestSkills(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{Skills: true}), testserver.Stateless())
	r := cli(t, "", "skills", url)
	if r.Code != 0 || !strings.Contains(r.Stdout, "pdf-processing") || !strings.Contains(r.Stdout, "Extract, fill, and assemble") {
		t.Fatalf("skills: %+v", r)
	}
	r = cli(t, "", "skills", url, "--load", "pdf-processing")
	if r.Code != 0 || !strings.Contains(r.Stdout, testserver.SkillBody) {
		t.Fatalf("skills --load: %+v", r)
	}
	bad := testserver.ServeStreamable(t, testserver.New(testserver.Options{Skills: true, SkillTamper: "digest"}), testserver.Stateless())
	r = cli(t, "", "skills", bad, "--load", "pdf-processing")
	if r.Code == 0 || !strings.Contains(r.Stderr, "digest check failed") || strings.Contains(r.Stdout, "fill ANY") {
		t.Fatalf("a tampered skill: %+v", r)
	}
}

// TestServerNameFromServer: a command target is named by the server's
// own serverInfo.name, not by the interpreter's path, in the tools table,
// in inspect and in the trace; --name overrides it everywhere.
func TestServerNameFromServer(t *testing.T) {
	var fs testenv.NPMServer
	for _, s := range testenv.NPMServers() {
		if s.Package == "@modelcontextprotocol/server-filesystem" {
			fs = s
		}
	}
	path, args, _ := fs.StdioCommand(t)
	target := append([]string{"--", path}, args...)
	cli(t, "", append([]string{"tools"}, target...)...).Must(t, 0, []string{"read_text_file             secure-filesystem-server"}, nil)
	cli(t, "", append([]string{"inspect", "--trace"}, target...)...).Must(t, 0,
		[]string{"secure-filesystem-server"}, []string{"secure-filesystem-server → ", `"method":"tools/list"`})
	r := cli(t, "", append([]string{"tools", "--name", "fs"}, target...)...)
	r.Must(t, 0, []string{"read_text_file             fs  "}, nil)
	if strings.Contains(r.Stdout, "node") {
		t.Errorf("the interpreter names the server:\n%s", r.Stdout)
	}
	cli(t, "", append([]string{"tools", "--name", "a b"}, target...)...).Must(t, 2, nil, []string{`--name "a b"`})
}
