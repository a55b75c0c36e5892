package mcpotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
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
