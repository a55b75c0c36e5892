// Command quickstart shows mcpadapter end to end with nothing installed: it
// lists and calls the tools of two MCP servers, one run in-process (protocol
// 2026-07-28) and one started as a stdio child process speaking the older
// initialize handshake (this same program, re-executed).
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve-stdio" {
		// The child: a handshake-era server on stdin/stdout.
		srv := demoServer("math", []string{"2025-11-25"})
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	targets := []struct {
		label  string
		target any
		tool   string
		args   string
	}{
		{"in-process go-sdk server", demoServer("weather", nil), "forecast", `{"city":"Paris"}`},
		{"stdio child process", mcpadapter.Command{Path: self, Args: []string{"serve-stdio"}}, "add", `{"a":2,"b":3}`},
	}
	for _, tg := range targets {
		a, err := mcpadapter.New(tg.target, nil)
		if err != nil {
			log.Fatal(err)
		}
		tools, err := a.Tools(ctx)
		if err != nil {
			log.Fatal(err)
		}
		info, err := a.Info(ctx)
		if err != nil {
			log.Fatal(err)
		}
		s := info.Servers[0]
		fmt.Printf("%s: %s %s, protocol %s (%s era, %s)\n", tg.label, s.Implementation.Name, s.Implementation.Version, s.ProtocolVersion, s.Era, s.Transport)
		for _, t := range tools {
			fmt.Printf("  tool %-10s %s\n", t.Name, t.Description)
		}
		res, err := findTool(tools, tg.tool).Call(ctx, json.RawMessage(tg.args))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("  %s(%s) -> %s", tg.tool, tg.args, text(res))
		if res.Artifact != nil {
			fmt.Printf("   structured: %s", res.Artifact.StructuredContent)
		}
		fmt.Println()
		if err := a.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

func findTool(tools []*mcpadapter.Tool, name string) *mcpadapter.Tool {
	for _, t := range tools {
		if t.Name == name {
			return t
		}
	}
	log.Fatalf("no tool %q", name)
	return nil
}

func text(r *mcpadapter.Result) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcpadapter.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

type forecastIn struct {
	City string `json:"city" jsonschema:"the city to forecast"`
}

type forecastOut struct {
	City       string  `json:"city"`
	Conditions string  `json:"conditions"`
	HighC      float64 `json:"highC"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

// demoServer returns a small server; versions restricts its protocol
// versions (nil: all, including 2026-07-28).
func demoServer(name string, versions []string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	switch name {
	case "weather":
		mcp.AddTool(srv, &mcp.Tool{Name: "forecast", Description: "Tomorrow's weather for a city"},
			func(_ context.Context, _ *mcp.CallToolRequest, in forecastIn) (*mcp.CallToolResult, forecastOut, error) {
				out := forecastOut{City: in.City, Conditions: "sunny", HighC: 24}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: sunny, high 24°C", in.City)}}}, out, nil
			})
	case "math":
		mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Add two numbers"},
			func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
				return nil, addOut{Sum: in.A + in.B}, nil
			})
	}
	return srv
}
