// Command mcpadapter inspects, lists, calls and runs an agent over any MCP
// servers: a URL, a local command, or an mcpServers config. With no target
// and no config it uses two demo servers built into the binary.
//
//	mcpadapter tools
//	mcpadapter call math_add '{"a":2,"b":3}'
//	mcpadapter inspect --trace https://example.com/mcp
//	mcpadapter agent --model gpt-4o-mini
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcpadapter/mcpadapter"
	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK        = 0
	exitToolError = 1 // the tool ran and reported an error
	exitFailure   = 2 // usage, config or transport error
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// app holds what the commands share.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	configPath string
	verbose    bool
	headers    []string
	token      string
	oauth      bool
	tokenFile  string
	timeout    string
	code       int // exit status set by a command that ran
}

// run runs the CLI and returns its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return a.code
	}
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(stderr, "mcpadapter: %v\nRun 'mcpadapter --help' for usage.\n", err)
		return exitFailure
	}
	a.printError(err)
	return exitFailure
}

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag") || strings.Contains(s, "flag needs an argument") ||
		strings.HasPrefix(s, "invalid argument") || strings.HasPrefix(s, "accepts ") || strings.HasPrefix(s, "requires at least")
}

// printError prints err as one line, or in full with --verbose.
func (a *app) printError(err error) {
	msg := err.Error()
	if !a.verbose {
		first, rest, cut := strings.Cut(msg, "\n")
		msg = first
		var te *mcpadapter.TransportError
		if cut && strings.TrimSpace(rest) != "" && errors.As(err, &te) && len(te.Stderr) > 0 {
			msg += fmt.Sprintf(" (last stderr line: %q; --verbose shows more)", te.Stderr[len(te.Stderr)-1])
		} else if cut {
			msg += " (--verbose shows more)"
		}
	}
	msg = strings.TrimPrefix(msg, "mcpadapter: ")
	fmt.Fprintf(a.stderr, "mcpadapter: %s\n", msg)
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpadapter",
		Short: "Use any MCP server's tools from the command line or an agent",
		Long: `mcpadapter connects to MCP servers — a URL, a local command, or the servers of an
mcpServers config — and lists their tools, calls them, inspects the connection, or runs an
LLM agent that uses them.

Targets: an http(s) URL (streamable HTTP, or HTTP+SSE for a path ending in /sse), a script or
program path (run over stdio), or a command after "--". With no target: --config FILE, then
./.mcp.json, then ~/.config/mcpadapter/mcp.json, and with none of those the built-in demo servers.`,
		Example: `  mcpadapter tools
  mcpadapter tools https://example.com/mcp
  mcpadapter tools --config .mcp.json --json
  mcpadapter call math_add '{"a":2,"b":3}'
  mcpadapter call weather_forecast --arg city=Paris
  mcpadapter inspect --trace -- npx -y @modelcontextprotocol/server-everything
  mcpadapter agent --model gpt-4o-mini --once "What is 2+3?"`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "mcpServers config `file` (default: ./.mcp.json, then ~/.config/mcpadapter/mcp.json)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "show full errors and connection details")
	pf.StringArrayVarP(&a.headers, "header", "H", nil, "HTTP header `Name: value` (or Name=value) for a URL target (repeatable)")
	pf.StringVar(&a.token, "token", "", "bearer `token` for a URL target (default $MCP_TOKEN)")
	pf.BoolVar(&a.oauth, "oauth", false, "sign in with OAuth to a URL target (a config says \"auth\": \"oauth\" per server)")
	pf.StringVar(&a.tokenFile, "token-file", "", "`file` keeping OAuth tokens (default ~/.config/mcpadapter/tokens.json)")
	pf.StringVar(&a.timeout, "timeout", "", "per-request `timeout`, e.g. 30s (default: none)")
	root.AddCommand(a.toolsCommand(), a.callCommand(), a.inspectCommand(), a.agentCommand(), a.demoServerCommand(), a.versionCommand())
	return root
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.stdout, "mcpadapter %s (MCP go-sdk v1.8.0; protocols 2026-07-28 and 2025-11-25 back to 2024-11-05)\n", mcpadapter.Version)
			return nil
		},
	}
}
