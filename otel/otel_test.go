package mcpotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	mcpotel "github.com/mcpadapter/mcpadapter/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// setup returns a Telemetry recording into memory.
func setup(t *testing.T) (*mcpotel.Telemetry, *tracetest.SpanRecorder, *sdkmetric.ManualReader, trace.Tracer) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	return tel, rec, reader, tp.Tracer("test")
}

// attrs returns a span's attributes by key.
func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value)
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestSpansAndTraceContext calls a streamable HTTP server (2026-07-28,
// stateless) and a stdio server (handshake era) inside a parent span:
// the tool call's span has the conventions' attributes, its trace id
// reaches the server in _meta.traceparent with the call span as parent,
// and connect and tools/list have spans of their own.
func TestSpansAndTraceContext(t *testing.T) {
	for _, tt := range []struct {
		name      string
		target    func(t *testing.T) any
		transport string
		session   bool
	}{
		{"http", func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
		}, "tcp", false},
		{"stdio", func(t *testing.T) any {
			return mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", "legacy"}}
		}, "pipe", false},
		{"http-session", func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
		}, "tcp", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tel, rec, _, tracer := setup(t)
			c, err := mcpadapter.NewClient(tt.target(t), &mcpadapter.ClientOptions{Telemetry: tel, Name: "srv"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ctx, parent := tracer.Start(ctx, "agent turn")
			tools, err := c.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var whoami *mcpadapter.Tool
			for _, tool := range tools {
				if tool.Name == "whoami" {
					whoami = tool
				}
			}
			res, err := whoami.Call(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			parent.End()
			var w testserver.Whoami
			if err := res.Artifact.Decode(&w); err != nil {
				t.Fatal(err)
			}

			spans := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range rec.Ended() {
				spans[s.Name()] = s
			}
			call := spans["tools/call whoami"]
			if call == nil {
				t.Fatalf("no tools/call span among %v", spanNames(rec))
			}
			tid := parent.SpanContext().TraceID()
			if call.SpanContext().TraceID() != tid || call.Parent().SpanID() != parent.SpanContext().SpanID() || call.SpanKind() != trace.SpanKindClient {
				t.Errorf("call span not a client child of the turn: %+v", call.Parent())
			}
			tp, _ := w.Meta["traceparent"].(string)
			if !strings.Contains(tp, tid.String()) || !strings.Contains(tp, call.SpanContext().SpanID().String()) {
				t.Errorf("the server saw traceparent %q; want trace %s, parent span %s", tp, tid, call.SpanContext().SpanID())
			}
			a := attrs(call)
			want := map[attribute.Key]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": "whoami", "gen_ai.operation.name": "execute_tool",
				"network.transport": tt.transport, "mcpadapter.server": "srv",
			}
			for k, v := range want {
				if a[k].AsString() != v {
					t.Errorf("%s = %q; want %q", k, a[k].AsString(), v)
				}
			}
			if a["mcp.protocol.version"].AsString() == "" {
				t.Error("no mcp.protocol.version")
			}
			if _, ok := a["mcp.session.id"]; ok != tt.session {
				t.Errorf("mcp.session.id present %v; want %v", ok, tt.session)
			}
			for _, name := range []string{"tools/list", "connect"} {
				if s := spans[name]; s == nil || s.SpanContext().TraceID() != tid {
					t.Errorf("no %s span in the turn's trace (spans: %v)", name, spanNames(rec))
				}
			}
		})
	}
}

// TestErrorsAndMetrics checks error.type on spans and the duration
// histogram, counted by kind: a tool error, a refused call (JSON-RPC
// error -32602 becomes a tool error result), and a timeout.
func TestErrorsAndMetrics(t *testing.T) {
	tel, rec, reader, _ := setup(t)
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		if _, err := c.CallTool(ctx, "echo", []byte(`{"text":"hi"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := c.CallTool(ctx, "fail", []byte(`{"message":"no"}`), nil); err != nil || !res.IsError {
		t.Fatalf("fail: %v %v", res, err)
	}
	_, err = c.CallTool(ctx, "slow", []byte(`{"ms":20000}`), &mcpadapter.CallOptions{Timeout: 50 * time.Millisecond})
	var te *mcpadapter.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("slow: %v", err)
	}

	byType := map[string]int{}
	for _, s := range rec.Ended() {
		if s.Name() == "connect" {
			continue
		}
		et := attrs(s)["error.type"].AsString()
		byType[et]++
		if (et != "") != (s.Status().Code == codes.Error) {
			t.Errorf("span %s: error.type %q, status %v", s.Name(), et, s.Status())
		}
	}
	if byType["tool_error"] != 1 || byType["timeout"] != 1 || byType[""] != 3 {
		t.Errorf("spans by error.type: %v", byType)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != mcpotel.MetricDuration || m.Unit != "s" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				et, _ := dp.Attributes.Value("error.type")
				tool, _ := dp.Attributes.Value("gen_ai.tool.name")
				counts[tool.AsString()+"/"+et.AsString()] += dp.Count
			}
		}
	}
	t.Logf("%s data points: %v", mcpotel.MetricDuration, counts)
	if counts["echo/"] != 3 || counts["fail/tool_error"] != 1 || counts["slow/timeout"] != 1 {
		t.Errorf("duration counts by tool/error.type: %v", counts)
	}
}

func spanNames(rec *tracetest.SpanRecorder) []string {
	var out []string
	for _, s := range rec.Ended() {
		out = append(out, s.Name())
	}
	return out
}
