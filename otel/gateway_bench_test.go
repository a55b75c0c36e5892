package mcpotel_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	mcpotel "github.com/mcpadapter/mcpadapter/otel"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// benchTelemetry returns a Telemetry on the OpenTelemetry SDK: every span
// sampled (and dropped: no exporter), the histograms aggregated in memory.
func benchTelemetry(b *testing.B) *mcpotel.Telemetry {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	return tel
}

// BenchmarkServerOperation measures the otel side of one gateway request:
// the server span started from the client's traceparent, the trace
// context written into the forwarded _meta, the span ended and the
// duration recorded.
func BenchmarkServerOperation(b *testing.B) {
	tel := benchTelemetry(b)
	op := mcpadapter.ServerOperation{Method: "tools/call", Server: "up", Tool: "echo", ProtocolVersion: "2025-11-25",
		Transport: "streamable-http", SessionID: "0123456789abcdef", Header: http.Header{},
		Meta: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, end := tel.StartServerOperation(ctx, op)
		meta := map[string]any{}
		tel.InjectMeta(c, meta)
		end(mcpadapter.ServerOperationResult{})
	}
}

// BenchmarkGatewayCall measures one echo call from a go-sdk client (over
// streamable HTTP on loopback) through a gateway to an in-process server,
// the gateway without Telemetry ("unset") and with mcpotel on the SDK as
// its Telemetry and its server's client's ("otel"): a server span and a
// client span per call, and both histograms.
func BenchmarkGatewayCall(b *testing.B) {
	for _, name := range []string{"unset", "otel"} {
		b.Run(name, func(b *testing.B) {
			opts := &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if name == "otel" {
				tel := benchTelemetry(b)
				opts.Telemetry, opts.Client = tel, &mcpadapter.ClientOptions{Telemetry: tel}
			}
			g, err := gateway.New([]gateway.Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = g.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := g.Start(ctx); err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(g)
			b.Cleanup(ts.Close)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = cs.Close() })
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"},
				Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatalf("echo: %v", err)
				}
			}
		})
	}
}
