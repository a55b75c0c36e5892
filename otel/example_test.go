package mcpotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	mcpotel "github.com/mcpadapter/mcpadapter/otel"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A client that reports to OpenTelemetry: a span for the connection, the
// listing and each tool call. Here the spans go to a recorder; in a
// program, to the tracer provider of its exporter (nil Options: the
// global providers).
func Example() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tel, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Name: "echo", Telemetry: tel})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
		log.Fatal(err)
	}
	for _, s := range rec.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// connect
	// tools/call echo
}

// A gateway that reports to OpenTelemetry: a server span for each request
// of a client, continuing the client's trace (the traceparent in the
// request's _meta, else in its HTTP headers), and, with the same
// Telemetry on the servers' clients, a client span for each request to a
// server, which carries it on. The gateway is an http.Handler: mount it
// where the program serves HTTP. Here a go-sdk client calls it over
// loopback and the spans go to a recorder.
func Example_gateway() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tel, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	g, err := gateway.New([]gateway.Server{{Name: "echo", Target: srv}}, &gateway.Options{
		Telemetry: tel,                                       // the gateway's server spans
		Client:    &mcpadapter.ClientOptions{Telemetry: tel}, // its requests to the servers
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g)
	hs := httptest.NewServer(mux)
	defer hs.Close()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	rec.Reset()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"},
		Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range rec.Ended() {
		fmt.Println(s.SpanKind(), s.Name(), s.SpanContext().TraceID())
	}
	// Output:
	// client tools/call echo 4bf92f3577b34da6a3ce929d0e0e4736
	// server tools/call echo 4bf92f3577b34da6a3ce929d0e0e4736
}
