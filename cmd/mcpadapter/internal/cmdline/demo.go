package cmdline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/demo"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// The demo: two small servers built into the program (package demo), so
// that every command works on a fresh machine with nothing installed.
// weather speaks 2026-07-28 over streamable HTTP on a loopback port, served
// by this process; math speaks the 2025-11-25 handshake over stdio, as a
// child process running this program's "demo-server math".

// openDemo starts the weather server and returns a session over both
// demo servers.
func (a *App) openDemo(ctx context.Context, base mcpadapter.ClientOptions, oo OpenOptions) (*session.Session, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("demo: finding this program: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	srv := &http.Server{
		Handler:           mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.Weather() }, &mcp.StreamableHTTPOptions{Stateless: true}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	}
	url := "http://" + l.Addr().String() + "/mcp"
	// One adapter per server: weather keeps 2026-07-28 and math its
	// handshake; in one group the oldest would set the era for both.
	s := session.Prefixed("demo", stop)
	for _, target := range []struct {
		name string
		t    any
	}{
		{"weather", url},
		{"math", mcpadapter.Command{Path: self, Args: []string{"demo-server", "math"}}},
	} {
		o := base
		o.Name = target.name
		c, err := mcpadapter.NewClient(target.t, &o)
		if err != nil {
			s.Close()
			return nil, err
		}
		ad, err := mcpadapter.New(c, a.adapterOptions(oo))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Add(ad)
	}
	fmt.Fprintf(a.Stderr, "mcpadapter: no target and no config found; using the built-in demo servers (weather: 2026-07-28 over streamable HTTP at %s, math: handshake era over stdio)\n", url)
	return s, nil
}

// DemoServerCommand is the "demo-server" command: it runs a demo server
// over stdio, or over streamable HTTP with --http. Every program that opens
// the demo needs it, for the math server's child process.
func (a *App) DemoServerCommand() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "demo-server weather|math",
		Short: "Run a built-in demo MCP server (stdio, or HTTP with --http)",
		Example: `  mcpadapter demo-server math                      # over stdio
  mcpadapter demo-server weather --http 127.0.0.1:8080  # streamable HTTP at /mcp`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"weather", "math"},
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, ok := demo.ByName(args[0])
			if !ok {
				return Usagef("no demo server %q; there are weather and math", args[0])
			}
			if addr == "" {
				return srv.Run(cmd.Context(), &mcp.StdioTransport{})
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Stderr, "serving %s at http://%s/mcp\n", args[0], l.Addr())
			hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: demo.Stateless(args[0])}), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-cmd.Context().Done()
				_ = hs.Close()
			}()
			if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on this `address` instead of stdio")
	return cmd
}
