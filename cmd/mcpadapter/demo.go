package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// The demo: two small servers built into the binary, so that every command
// works on a fresh machine with nothing installed. weather speaks
// 2026-07-28 over streamable HTTP on a loopback port, served by this
// process; math speaks the 2025-11-25 handshake over stdio, as a child
// process running "mcpadapter demo-server math".

// openDemo starts the weather server and returns a session over both
// demo servers.
func (a *app) openDemo(ctx context.Context, base mcpadapter.ClientOptions, oo openOptions) (*session, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("demo: finding this program: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	srv := &http.Server{
		Handler:           mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return weatherServer() }, &mcp.StreamableHTTPOptions{Stateless: true}),
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
	s := &session{prefix: true, source: "demo", close: stop}
	for _, target := range []struct {
		name string
		t    any
	}{
		{"weather", url},
		{"math", mcpadapter.Command{Path: self, Args: []string{"demo-server", "math"}}},
	} {
		o := base
		o.Name = target.name
		c, err := mcpadapter.NewClient(target.t, o)
		if err != nil {
			s.Close()
			return nil, err
		}
		ad, err := mcpadapter.New(c, oo.adapter...)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.adapters = append(s.adapters, ad)
	}
	fmt.Fprintf(a.stderr, "mcpadapter: no target and no config found; using the built-in demo servers (weather: 2026-07-28 over streamable HTTP at %s, math: handshake era over stdio)\n", url)
	return s, nil
}

func (a *app) demoServerCommand() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "demo-server weather|math",
		Short: "Run a built-in demo MCP server (stdio, or HTTP with --http)",
		Example: `  mcpadapter demo-server math                      # over stdio
  mcpadapter demo-server weather --http 127.0.0.1:8080  # streamable HTTP at /mcp`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"weather", "math"},
		RunE: func(cmd *cobra.Command, args []string) error {
			var srv *mcp.Server
			switch args[0] {
			case "weather":
				srv = weatherServer()
			case "math":
				srv = mathServer()
			default:
				return usagef("no demo server %q; there are weather and math", args[0])
			}
			if addr == "" {
				return srv.Run(cmd.Context(), &mcp.StdioTransport{})
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "serving %s at http://%s/mcp\n", args[0], l.Addr())
			hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: args[0] == "weather"}), ReadHeaderTimeout: 10 * time.Second}
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

type forecastIn struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
	Days int    `json:"days,omitempty" jsonschema:"how many days, 1 to 5 (default 3)"`
}

type dayForecast struct {
	Day        int    `json:"day"`
	Conditions string `json:"conditions"`
	HighC      int    `json:"highC"`
	LowC       int    `json:"lowC"`
}

type forecastOut struct {
	City string        `json:"city"`
	Days []dayForecast `json:"days"`
}

type subscribeIn struct {
	City string `json:"city" jsonschema:"the city to get alerts for"`
}

// weatherServer is the demo's 2026-07-28 server.
func weatherServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo-weather", Version: mcpadapter.Version},
		&mcp.ServerOptions{Instructions: "Demo weather data: deterministic, not real."})
	mcp.AddTool(srv, &mcp.Tool{Name: "forecast", Description: "Weather forecast for a city (demo data)"},
		func(_ context.Context, _ *mcp.CallToolRequest, in forecastIn) (*mcp.CallToolResult, forecastOut, error) {
			if in.City == "" {
				return nil, forecastOut{}, errors.New("city is required")
			}
			days := in.Days
			if days <= 0 {
				days = 3
			}
			if days > 5 {
				return nil, forecastOut{}, fmt.Errorf("at most 5 days, not %d", days)
			}
			h := fnv.New32a()
			h.Write([]byte(in.City))
			seed := int(h.Sum32())
			conditions := []string{"sunny", "cloudy", "rain", "windy", "snow"}
			out := forecastOut{City: in.City}
			summary := in.City + ":"
			for d := range days {
				f := dayForecast{Day: d + 1, Conditions: conditions[(seed/(d+1))%len(conditions)], HighC: 10 + (seed>>(d+2))%15}
				f.LowC = f.HighC - 6
				out.Days = append(out.Days, f)
				summary += fmt.Sprintf(" day %d %s %d/%d°C;", f.Day, f.Conditions, f.HighC, f.LowC)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary}}}, out, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "subscribe", Description: "Subscribe to weather alerts; asks the user for an email address"},
		func(_ context.Context, req *mcp.CallToolRequest, in subscribeIn) (*mcp.CallToolResult, any, error) {
			r, ok := req.Params.InputResponses["contact"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"contact": &mcp.ElicitParams{
					Mode:    "form",
					Message: "Where should alerts for " + in.City + " go?",
					RequestedSchema: map[string]any{"type": "object", "required": []any{"email"}, "properties": map[string]any{
						"email":     map[string]any{"type": "string", "format": "email", "title": "Email address"},
						"frequency": map[string]any{"type": "string", "enum": []any{"daily", "weekly"}, "default": "daily"},
					}},
				}}}, nil, nil
			}
			text := "Not subscribed (" + r.Action + ")."
			if r.Action == "accept" {
				text = fmt.Sprintf("Subscribed %v to %v alerts for %s.", r.Content["email"], r.Content["frequency"], in.City)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return srv
}

type pairIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type numberOut struct {
	Result float64 `json:"result"`
}

type countIn struct {
	To      int `json:"to" jsonschema:"count from 1 to this, 1 to 100"`
	DelayMs int `json:"delay_ms,omitempty" jsonschema:"pause between numbers in milliseconds (default 100)"`
}

// mathServer is the demo's handshake-era server.
func mathServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo-math", Version: mcpadapter.Version},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}})
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Add two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in pairIn) (*mcp.CallToolResult, numberOut, error) {
			return nil, numberOut{Result: in.A + in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "divide", Description: "Divide a by b"},
		func(_ context.Context, _ *mcp.CallToolRequest, in pairIn) (*mcp.CallToolResult, numberOut, error) {
			if in.B == 0 {
				return nil, numberOut{}, errors.New("division by zero")
			}
			return nil, numberOut{Result: in.A / in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "count", Description: "Count slowly, reporting progress"},
		func(ctx context.Context, req *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, any, error) {
			if in.To < 1 || in.To > 100 {
				return nil, nil, fmt.Errorf("to must be 1 to 100, not %d", in.To)
			}
			delay := time.Duration(in.DelayMs) * time.Millisecond
			if in.DelayMs <= 0 {
				delay = 100 * time.Millisecond
			}
			for i := 1; i <= in.To; i++ {
				select {
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-time.After(delay):
				}
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.To), Message: fmt.Sprintf("counted %d", i)})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("counted to %d", in.To)}}}, nil, nil
		})
	return srv
}
