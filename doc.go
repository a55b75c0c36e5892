// Package mcpadapter turns the tools of MCP (Model Context Protocol)
// servers into tools a Go LLM agent can call.
//
// To get started, give New a target and ask the Adapter for its tools:
// each Tool has a name safe for model APIs, a description, the input
// schema byte for byte as the server sent it, and a Call method that
// returns a Result for the model. The Adapter connects on first use,
// reconnects after a lost connection, and runs the tool calls of many
// goroutines at once over one connection.
//
// A complete program, with a go-sdk server run in-process:
//
//	package main
//
//	import (
//		"context"
//		"encoding/json"
//		"fmt"
//		"log"
//
//		"github.com/mcpadapter/mcpadapter"
//		"github.com/modelcontextprotocol/go-sdk/mcp"
//	)
//
//	type input struct {
//		City string `json:"city"`
//	}
//
//	func main() {
//		ctx := context.Background()
//		srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
//		mcp.AddTool(srv, &mcp.Tool{Name: "get_forecast", Description: "Tomorrow's forecast for a city"},
//			func(_ context.Context, _ *mcp.CallToolRequest, in input) (*mcp.CallToolResult, map[string]any, error) {
//				return nil, map[string]any{"city": in.City, "forecast": "sunny"}, nil
//			})
//
//		a, err := mcpadapter.New(srv, nil) // or "https://example.com/mcp", or mcpadapter.Command{...}
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer a.Close() // ends connections; the tools stay callable and reconnect
//		tools, err := a.Tools(ctx)
//		if err != nil {
//			log.Fatal(err)
//		}
//		res, err := tools[0].Call(ctx, json.RawMessage(`{"city":"Paris"}`))
//		if err != nil {
//			log.Fatal(err) // a transport failure: the model cannot act on it
//		}
//		fmt.Println(tools[0].Name, res.IsError, res.Text())
//	}
//
// It prints
//
//	get_forecast false {"city":"Paris","forecast":"sunny"}
//
// # Targets
//
// New, NewClient and NewGroup take a target: an http(s) URL (a string or a
// *url.URL; a path ending in /sse is the legacy HTTP+SSE transport, any
// other is streamable HTTP, falling back to HTTP+SSE when the server
// answers as a legacy one), a Command or Script (a local server over
// stdio, in its own process group, never outliving this process), an
// in-process go-sdk *mcp.Server, a *Config (an mcpServers document, as
// Claude Desktop, Cursor and FastMCP read it; LoadConfig), or a *Client or
// *Group you configured. A string never starts a process.
//
// # Protocol versions
//
// MCP has two eras: the initialize handshake (protocol versions up to
// 2025-11-25: stateful sessions, server requests in the middle of a call)
// and the stateless server/discover of 2026-07-28 (multi-round-trip
// requests, caching hints). Each connection negotiates its own through
// go-sdk; ServerInfo (Client.Connect, Adapter.Servers) says which it got.
// One Group speaks one era: its oldest server sets it.
//
// # Tools
//
// Adapter.Tools lists the tools of every server of the target (with two
// or more servers, named server_tool; a collision is an error naming both).
// Options select, rename and reshape them (Options.Tools, ToolTransform),
// search a large catalog (ToolSearch), and keep lists live as servers
// change them (WatchTools). Tool.CallWith takes per-call options: progress,
// _meta, time limits, tasks. With Options.Elicitation set to
// ElicitInterrupt, a server's question during a call becomes an
// *InputRequiredError that the agent's framework turns into an interrupt,
// and Tool.Resume continues the call with the user's answers.
//
// # Results
//
// A tool that ran returns a *Result: its Content (text, images, audio,
// resource links and embedded resources, _meta and annotations kept),
// IsError when the tool itself failed (the server's own text, for the
// model to read), and Artifact for structured content. Result.Text is what
// a model that reads text gets, cut to a bound with a note when it is
// large.
//
// # Errors
//
// A Go error means the model cannot act on the outcome, and its type says
// why: *TransportError (the connection failed: not started, closed, timed
// out — with a *TimeoutError, a *ProcessExitError or a *StdoutError inside
// — and the last lines of a stdio server's stderr), *ContentError (a
// result that cannot be converted), *TargetError, *ServerError (a
// JSON-RPC error to a listing or a read), *ListLimitError, and the errors
// of tasks, identities and authorization. All are found with errors.As.
//
// # Options
//
// Every constructor takes its options as a struct, and a nil pointer means
// the defaults: New(target, *Options) for what the adapter does with tools
// (elicitation, filtering, servers that are down), NewClient(target,
// *ClientOptions) and NewGroup(cfg, *ClientOptions) for how to reach a
// server (auth, headers, timeouts, cache, handlers, the protocol trace),
// and Tool.CallWith(ctx, args, *CallOptions) for one call. Settings that
// travel with a request through code you do not own are on the context:
// WithCacheMode, WithCallIdentity. Adapter.Client and Client.Session give
// the go-sdk session for everything this package does not wrap.
//
// The binding modules (eino, openai, anthropic, gemini, genkit,
// langchaingo) give the tools to agent frameworks and model SDKs; the otel
// module reports to OpenTelemetry; redisstore and pgstore keep state
// shared by replicas. ARCHITECTURE.md in the repository maps the packages
// for contributors.
package mcpadapter
