package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
	"github.com/spf13/cobra"
)

func inspectCommand(a *cmdline.App) *cobra.Command {
	var trace bool
	cmd := &cobra.Command{
		Use:   "inspect [TARGET | -- COMMAND ARGS...]",
		Short: "Show each server's protocol, identity, capabilities and what it offers",
		Long: `Connect to each server and report the protocol era and version negotiated (the servers of a
config are a group and speak one era, the oldest's; the demo's are separate), the server's name
and version, its capabilities and instructions, how many tools, prompts and resources it
offers, and how long connecting took. --trace prints every JSON-RPC message exchanged, with
tokens and Authorization values redacted: the first thing to look at when a server will not
connect.`,
		Example: `  mcpadapter inspect
  mcpadapter inspect --trace https://example.com/mcp
  mcpadapter inspect --trace -- python3 server.py`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			oo := cmdline.OpenOptions{SkipUnavailable: true}
			if trace {
				oo.Trace = true
				oo.Logger = slog.New(&traceHandler{w: a.Stderr, mu: &sync.Mutex{}})
			}
			s, err := a.Open(ctx, cmd, args, oo)
			if err != nil {
				return err
			}
			defer s.Close()
			info, err := s.Info(ctx)
			if err != nil {
				return err
			}
			printEras(a.Stdout, s.Source(), info)
			for _, si := range info.Servers {
				printServer(ctx, a, s, si)
			}
			for _, f := range info.Unavailable {
				msg, _, _ := strings.Cut(f.Err.Error(), "\n")
				fmt.Fprintf(a.Stdout, "\nserver %s: UNAVAILABLE: %s\n", f.Server, strings.TrimPrefix(msg, "mcpadapter: "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&trace, "trace", false, "print the JSON-RPC exchange (redacted) on stderr")
	return cmd
}

// printEras says where the servers came from and how their protocol eras
// were set: one era for the servers of a group (the oldest's), each its
// own for servers in separate adapters (the demo).
func printEras(w io.Writer, source string, info *session.Info) {
	fmt.Fprintf(w, "source: %s\n", source)
	if info.Separate {
		fmt.Fprintln(w, "protocol eras: one per server (separate adapters, each negotiating its own)")
	}
	for _, g := range info.Groups {
		fmt.Fprintf(w, "protocol era of the group (%s): %s", strings.Join(g.Servers, ", "), g.Era)
		if g.PulledDownBy != "" {
			fmt.Fprintf(w, " (pulled down to the handshake era by %s)", g.PulledDownBy)
		}
		fmt.Fprintln(w)
	}
}

func printServer(ctx context.Context, a *cmdline.App, s *session.Session, si mcpadapter.ServerInfo) {
	w := a.Stdout
	fmt.Fprintf(w, "\nserver %s\n", si.Name)
	fmt.Fprintf(w, "  transport:    %s\n", si.Transport)
	fmt.Fprintf(w, "  protocol:     %s (%s era)\n", si.ProtocolVersion, si.Era)
	if impl := si.Implementation; impl != nil {
		fmt.Fprintf(w, "  implementation: %s %s\n", impl.Name, impl.Version)
	}
	fmt.Fprintf(w, "  connect time: %v\n", si.ConnectTime.Round(time.Millisecond))
	var caps []string
	if c := si.Capabilities; c != nil {
		if c.Tools != nil {
			caps = append(caps, fmt.Sprintf("tools(listChanged=%v)", c.Tools.ListChanged))
		}
		if c.Prompts != nil {
			caps = append(caps, "prompts")
		}
		if c.Resources != nil {
			caps = append(caps, fmt.Sprintf("resources(subscribe=%v)", c.Resources.Subscribe))
		}
		if c.Completions != nil {
			caps = append(caps, "completions")
		}
		//lint:ignore SA1019 logging is deprecated in 2026-07-28 but handshake-era servers still offer it
		if c.Logging != nil {
			caps = append(caps, "logging")
		}
		for name := range c.Extensions {
			caps = append(caps, name)
		}
	}
	fmt.Fprintf(w, "  capabilities: %s\n", strings.Join(caps, ", "))
	if si.Instructions != "" {
		fmt.Fprintf(w, "  instructions: %s\n", cmdline.FirstLine(si.Instructions, 200))
	}
	c, err := s.Client(si.Name)
	if err != nil {
		return
	}
	count := func(what string, n int, err error) {
		if err != nil {
			fmt.Fprintf(w, "  %-13s error: %s\n", what+":", cmdline.FirstLine(err.Error(), 100))
			return
		}
		fmt.Fprintf(w, "  %-13s %d\n", what+":", n)
	}
	if si.Capabilities != nil && si.Capabilities.Tools != nil {
		tools, err := c.ListTools(ctx)
		count("tools", len(tools), err)
	}
	if si.Capabilities != nil && si.Capabilities.Prompts != nil {
		prompts, err := c.ListPrompts(ctx)
		count("prompts", len(prompts), err)
	}
	if si.Capabilities != nil && si.Capabilities.Resources != nil {
		res, err := c.ListResources(ctx)
		count("resources", len(res), err)
	}
}

// traceHandler prints the protocol trace compactly: one line per message.
type traceHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	attrs []slog.Attr
}

func (h *traceHandler) Enabled(_ context.Context, l slog.Level) bool { return true }

func (h *traceHandler) Handle(_ context.Context, r slog.Record) error {
	var server, message string
	collect := func(a slog.Attr) bool {
		switch a.Key {
		case "server":
			server = a.Value.String()
		case "message":
			message = a.Value.String()
		}
		return true
	}
	for _, a := range h.attrs {
		collect(a)
	}
	r.Attrs(collect)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch r.Message {
	case "mcp send":
		fmt.Fprintf(h.w, "%s → %s\n", server, message)
	case "mcp recv":
		fmt.Fprintf(h.w, "%s ← %s\n", server, message)
	default:
		if r.Level >= slog.LevelInfo {
			fmt.Fprintf(h.w, "%s: %s\n", server, r.Message)
		}
	}
	return nil
}

func (h *traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &traceHandler{w: h.w, mu: h.mu, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *traceHandler) WithGroup(string) slog.Handler { return h }
