// Command mcpadapter-agent is "mcpadapter agent": an LLM agent (eino ADK)
// with an OpenAI-compatible chat model and the tools of any MCP servers. It
// is a program of its own so that the mcpadapter program, which lists and
// calls tools, builds without the agent framework; mcpadapter runs it for
// "mcpadapter agent ARGS" with the same arguments. Install it with
//
//	go install github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent@latest
//
// next to mcpadapter or anywhere on PATH.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the agent command and returns its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{cmdline.New(stdin, stdout, stderr, "mcpadapter agent")}
	root := a.agentCommand()
	a.AddFlags(root)
	// The demo's math server runs as a child process of this program.
	demoServer := a.DemoServerCommand()
	demoServer.Hidden = true
	root.AddCommand(demoServer)
	return a.Execute(ctx, root, args)
}
