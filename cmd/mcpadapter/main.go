// Command mcpadapter inspects, lists, calls and runs an agent over any MCP
// servers: a URL, a local command, or an mcpServers config. With no target
// and no config it uses two demo servers built into the binary.
//
//	mcpadapter tools
//	mcpadapter call math_add '{"a":2,"b":3}'
//	mcpadapter inspect --trace https://example.com/mcp
//	mcpadapter agent --model gpt-4o-mini
//
// The agent command runs a separate program, mcpadapter-agent (its own
// module, ./mcpadapter-agent), so that this one builds without the agent
// framework; see agent.go.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the CLI and returns its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := cmdline.New(stdin, stdout, stderr, "mcpadapter")
	return a.Execute(ctx, rootCommand(a), args)
}

func rootCommand(a *cmdline.App) *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpadapter",
		Short: "Use any MCP server's tools from the command line or an agent",
		Long: `mcpadapter connects to MCP servers — a URL, a local command, or the servers of an
mcpServers config — and lists their tools, calls them, inspects the connection, or runs an
LLM agent that uses them.

Targets: an http(s) URL (streamable HTTP, or HTTP+SSE for a path ending in /sse), a script or
program path (run over stdio), or a command after "--". With no target: --config FILE, then
./.mcp.json, then ~/.config/mcpadapter/mcp.json, and with none of those the built-in demo servers.
A project's config file (./.mcp.json) is used only once you trust it: see 'mcpadapter trust'.`,
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
	a.AddFlags(root)
	root.AddCommand(toolsCommand(a), skillsCommand(a), callCommand(a), inspectCommand(a), tasksCommand(a), agentCommand(a), serveCommand(a), uiCommand(a), a.DemoServerCommand(), a.TrustCommand(), versionCommand(a))
	return root
}

func versionCommand(a *cmdline.App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Long: `Print the version of this program's module, as the go command recorded it when it
built the program ("(devel)" for a build from a clone), the version of the mcpadapter
library and of the MCP go-sdk it was built with, and the MCP protocol versions it speaks.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(a.Stdout, versionLine())
			return nil
		},
	}
}

// versionLine describes the build of the running program.
func versionLine() string {
	cli, sdk := "(devel)", "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			cli = v
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				sdk = d.Version
				if d.Replace != nil {
					sdk = d.Replace.Version
				}
			}
		}
	}
	return fmt.Sprintf("mcpadapter %s (library %s, MCP go-sdk %s; protocols 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
		cli, mcpadapter.Version(), sdk)
}
