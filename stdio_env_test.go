package mcpadapter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envServerArg, as the test binary's first argument, makes it the stdio
// server of TestStdioSafeEnvironment: its tool "environ" answers with the
// names and values of its environment, one a line.
const envServerArg = "-mcpadapter-env-server"

func envServer() int {
	srv := mcp.NewServer(&mcp.Implementation{Name: "environ", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "environ"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		env := os.Environ()
		slices.Sort(env)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(env, "\n")}}}, nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childEnv starts target (the env server) and returns its environment.
func childEnv(t *testing.T, target any) map[string]string {
	t.Helper()
	ctx := testCtx(t)
	a, err := mcpadapter.New(target, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	var tool *mcpadapter.Tool
	for _, tl := range tools {
		tool = tl
	}
	if tool == nil {
		t.Fatal("no tool")
	}
	out := map[string]string{}
	for _, line := range strings.Split(mustCall(t, ctx, tool, `{}`).Text(), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

// TestStdioSafeEnvironment: a stdio server that dumps its environment gets
// the safe set of the official SDKs (HOME, LOGNAME, PATH, SHELL, TERM,
// USER) and what the command or config gives, not this process's secrets;
// InheritEnv (and a config's "inheritEnv") passes more, by name or prefix.
func TestStdioSafeEnvironment(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
	t.Setenv("AWS_REGION", "eu-west-3")
	t.Setenv("GITHUB_TOKEN", "ghp_secret_value")
	t.Setenv("TERM", "xterm-test")
	t.Setenv("SHELL", "() { :; }; echo pwned") // an exported bash function: never inherited
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(env map[string]string, extra ...string) {
		t.Helper()
		for k, v := range env {
			if !slices.Contains([]string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}, k) && !slices.Contains(extra, k) {
				t.Errorf("the server got %s=%.20s", k, v)
			}
		}
		if env["PATH"] != os.Getenv("PATH") || env["TERM"] != "xterm-test" {
			t.Errorf("the safe set did not arrive: PATH %q, TERM %q", env["PATH"], env["TERM"])
		}
		if _, ok := env["SHELL"]; ok {
			t.Errorf("a shell function was inherited: SHELL=%q", env["SHELL"])
		}
	}

	env := childEnv(t, mcpadapter.Command{Path: self, Args: []string{envServerArg}, Env: []string{"MODE=test"}})
	allowed(env, "MODE")
	if env["MODE"] != "test" {
		t.Errorf("Command.Env did not arrive: %v", env)
	}

	env = childEnv(t, mcpadapter.Command{Path: self, Args: []string{envServerArg}, InheritEnv: []string{"AWS_*"}})
	var aws []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			aws = append(aws, k)
		}
	}
	allowed(env, aws...)
	if env["AWS_REGION"] != "eu-west-3" || env["AWS_SECRET_ACCESS_KEY"] != "aws-secret-value" {
		t.Errorf("InheritEnv AWS_* did not pass AWS_*: %v", env)
	}

	cfgPath := filepath.Join(t.TempDir(), "mcp.json")
	doc := fmt.Sprintf(`{"mcpServers": {"env": {"command": %q, "args": [%q],
		"env": {"API_BASE": "https://api.example", "TOKEN": "${GITHUB_TOKEN}"}, "inheritEnv": ["AWS_REGION"]}}}`, self, envServerArg)
	if err := os.WriteFile(cfgPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpadapter.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	env = childEnv(t, cfg)
	allowed(env, "API_BASE", "TOKEN", "AWS_REGION")
	if env["API_BASE"] != "https://api.example" || env["TOKEN"] != "ghp_secret_value" || env["AWS_REGION"] != "eu-west-3" {
		t.Errorf("the config's env and inheritEnv did not arrive: %v", env)
	}

	env = childEnv(t, mcpadapter.Command{Path: self, Args: []string{envServerArg}, InheritEnv: []string{"*"}})
	if env["GITHUB_TOKEN"] != "ghp_secret_value" {
		t.Errorf(`InheritEnv "*" did not pass the whole environment`)
	}
}
