package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/spf13/cobra"
)

func uiCommand(a *cmdline.App) *cobra.Command {
	var port int
	var noOpen bool
	cmd := &cobra.Command{
		Use:   "ui [TARGET | -- COMMAND ARGS...]",
		Short: "Inspect the servers in a web page on 127.0.0.1",
		Long: `Start a local web inspector for the servers (a URL, a command after "--", a config, else the
demo) and print its address. The page shows each server's protocol, capabilities and connect
time (or why it failed), its tools with a form made from each schema, calls with progress,
cancel and the server's questions, resources, prompts, tasks, the protocol trace, the tools as
each model provider receives them, tool search, and saved calls that export as a Go test.

It listens on 127.0.0.1 only, on a random port unless --port says. The address holds a one-time
token: the first visit trades it for a cookie, and the page refuses any request without that
cookie, with a Host that is not a loopback name, or from another origin. No request can name a
command or a URL: the servers are the ones the command line names. The browser is opened when
there is one to open (never under CI=true); --no-open only prints the address.`,
		Example: `  mcpadapter ui
  mcpadapter ui https://example.com/mcp
  mcpadapter ui --config .mcp.json
  mcpadapter ui -- npx -y @modelcontextprotocol/server-everything`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUI(cmd, a, args, port, noOpen)
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "port on 127.0.0.1 (default: a random free port)")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "print the address without opening a browser")
	return cmd
}

func runUI(cmd *cobra.Command, a *cmdline.App, args []string, port int, noOpen bool) error {
	ctx := cmd.Context()
	if port < 0 || port > 65535 {
		return cmdline.Usagef("--port %d: want 0 to 65535", port)
	}
	rec := ui.NewRecorder()
	s, err := a.Open(ctx, cmd, args, cmdline.OpenOptions{Trace: true, Logger: rec.Logger(), Elicit: true, SkipUnavailable: true})
	if err != nil {
		return err
	}
	defer s.Close()
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	srv, err := ui.Serve(l, &ui.Options{Session: s, Recorder: rec, Target: exportTarget(cmd, args, s.Source())})
	if err != nil {
		_ = l.Close()
		return err
	}
	defer srv.Close()
	fmt.Fprintf(a.Stdout, "mcpadapter ui: inspecting %s\n\n  %s\n\nThe link works once (it holds a one-time token). Press Ctrl-C to stop.\n", s.Source(), srv.URL())
	if !noOpen && canOpenBrowser(a.Stdout) {
		if err := openBrowser(ctx, srv.URL()); err != nil {
			fmt.Fprintf(a.Stderr, "mcpadapter ui: could not open a browser (%v); open the address above\n", err)
		}
	}
	<-ctx.Done()
	return nil
}

// exportTarget says how saved calls exported as a Go test reach the
// servers the command line named.
func exportTarget(cmd *cobra.Command, args []string, source string) *ui.Target {
	if cmd.ArgsLenAtDash() == 0 && len(args) > 0 {
		return &ui.Target{Command: args}
	}
	if len(args) == 1 {
		if u, err := url.Parse(args[0]); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			return &ui.Target{URL: args[0]}
		}
		return &ui.Target{Script: args[0]}
	}
	if path, ok := strings.CutPrefix(source, "config "); ok {
		return &ui.Target{Config: path}
	}
	if source == "demo" {
		return &ui.Target{Demo: []string{"weather", "math"}}
	}
	return nil
}

// canOpenBrowser reports whether a browser may be opened: a person is at
// a terminal with a display, and this is not CI.
func canOpenBrowser(stdout any) bool {
	if os.Getenv("CI") != "" || !isTerminal(stdout) {
		return false
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// openBrowser asks the desktop to open u.
func openBrowser(ctx context.Context, u string) error {
	var c *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		c = exec.CommandContext(ctx, "open", u)
	case "windows":
		c = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", u)
	default:
		c = exec.CommandContext(ctx, "xdg-open", u)
	}
	if err := c.Start(); err != nil {
		return err
	}
	// The opener hands the URL over and exits; wait for it so that it is
	// not left behind, but not for long.
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return nil
	}
}
