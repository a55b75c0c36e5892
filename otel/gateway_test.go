package mcpotel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	mcpotel "github.com/mcpadapter/mcpadapter/otel"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The client protocol versions of the gateway tests: one of the
// handshake era, and 2026-07-28.
var eras = []string{"2025-11-25", "2026-07-28"}

// gatewayRig is a gateway with telemetry over HTTP on 127.0.0.1, whose
// requests are all for the principal "alice".
type gatewayRig struct {
	url    string
	rec    *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tracer trace.Tracer
}

// startGatewayRig starts a gateway in front of upstream, with tel built
// from opts (their providers are set here) as both its Telemetry and its
// servers' clients' Telemetry.
func startGatewayRig(t *testing.T, upstream any, opts mcpotel.Options) *gatewayRig {
	return startGatewayRigClient(t, upstream, opts, true)
}

// startGatewayRigClient is startGatewayRig, the servers' clients with
// telemetry or without.
func startGatewayRigClient(t *testing.T, upstream any, opts mcpotel.Options, clientTelemetry bool) *gatewayRig {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts.TracerProvider, opts.MeterProvider = tp, mp
	tel, err := mcpotel.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	client := &mcpadapter.ClientOptions{}
	if clientTelemetry {
		client.Telemetry = tel
	}
	g, err := gateway.New([]gateway.Server{{Name: "up", Target: upstream}}, &gateway.Options{
		Telemetry: tel,
		Client:    client,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "alice", Expiration: time.Now().Add(time.Hour)}, nil
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(g))
	t.Cleanup(ts.Close)
	return &gatewayRig{url: ts.URL + "/mcp", rec: rec, reader: reader, tracer: tp.Tracer("test")}
}

// headerTransport adds its headers to each request.
type headerTransport http.Header

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect connects a go-sdk client of protocol version v to the gateway,
// sending header with each request.
func (rig *gatewayRig) connect(t *testing.T, v string, header http.Header) *mcp.ClientSession {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer token"}}
	for k, vs := range header {
		h[k] = vs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rig.url, HTTPClient: &http.Client{Transport: headerTransport(h)}},
		&mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("connect at %s: %v", v, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// traceparent is the W3C traceparent of sc.
func traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
}

// whoamiMeta returns the _meta the server saw in a whoami call.
func whoamiMeta(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var w testserver.Whoami
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("whoami result %s: %v", b, err)
	}
	return w.Meta
}

// span returns the one ended span named name of kind.
func (rig *gatewayRig) span(t *testing.T, name string, kind trace.SpanKind) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range rig.rec.Ended() {
		if s.Name() == name && s.SpanKind() == kind {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s spans named %q; spans: %v", len(found), kind, name, spanNames(rig.rec))
	}
	return found[0]
}

// upstreams are the servers behind the gateway: a 2026-07-28 server over
// stateless HTTP, and a handshake-era server in-process.
func upstreams(t *testing.T) map[string]any {
	return map[string]any{
		"modern-http":      testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless()),
		"legacy-inprocess": testserver.New(testserver.Options{Era: testserver.Legacy}),
	}
}

// TestGatewayContinuesTrace: a client's tools/call with a traceparent in
// its _meta makes one trace from the client's span to what the server
// saw: the client's span is the parent of the gateway's server span,
// which is the parent of the gateway's client span to the server, whose
// id the server receives in its _meta. For clients of both protocol eras
// and servers of both.
func TestGatewayContinuesTrace(t *testing.T) {
	for name, up := range upstreams(t) {
		for _, v := range eras {
			t.Run(name+"/"+v, func(t *testing.T) {
				rig := startGatewayRig(t, up, mcpotel.Options{})
				cs := rig.connect(t, v, nil)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				ctx, agent := rig.tracer.Start(ctx, "agent turn", trace.WithSpanKind(trace.SpanKindClient))
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"traceparent": traceparent(agent.SpanContext()), "tracestate": "rojo=00f067aa0ba902b7"}})
				agent.End()
				if err != nil {
					t.Fatal(err)
				}
				seen := whoamiMeta(t, res)

				srv := rig.span(t, "tools/call whoami", trace.SpanKindServer)
				up := rig.span(t, "tools/call whoami", trace.SpanKindClient)
				tid := agent.SpanContext().TraceID()
				if srv.SpanContext().TraceID() != tid || srv.Parent().SpanID() != agent.SpanContext().SpanID() || !srv.Parent().IsRemote() {
					t.Errorf("gateway server span: trace %s parent %s; want the client's, %s %s", srv.SpanContext().TraceID(), srv.Parent().SpanID(), tid, agent.SpanContext().SpanID())
				}
				if up.SpanContext().TraceID() != tid || up.Parent().SpanID() != srv.SpanContext().SpanID() {
					t.Errorf("gateway client span: parent %s; want the server span %s", up.Parent().SpanID(), srv.SpanContext().SpanID())
				}
				if got, want := seen["traceparent"], traceparent(up.SpanContext()); got != want {
					t.Errorf("the server saw traceparent %v; want %s (the gateway's client span)", got, want)
				}
				if got := seen["tracestate"]; got != "rojo=00f067aa0ba902b7" {
					t.Errorf("the server saw tracestate %v; want the client's", got)
				}
				a := attrs(srv)
				for k, want := range map[attribute.Key]string{
					"mcp.method.name": "tools/call", "gen_ai.tool.name": "whoami", "gen_ai.operation.name": "execute_tool",
					"mcpadapter.server": "up", "network.transport": "tcp", "network.protocol.name": "http", "mcp.protocol.version": v,
				} {
					if a[k].AsString() != want {
						t.Errorf("server span %s = %q; want %q", k, a[k].AsString(), want)
					}
				}
				if _, ok := a["mcp.session.id"]; ok != (v != "2026-07-28") {
					t.Errorf("mcp.session.id present %v for %s", ok, v)
				}
				if _, ok := a["mcpadapter.principal"]; ok {
					t.Error("the principal is on the span without Options.Principals")
				}
			})
		}
	}
}

// TestGatewayTraceFromHeader: a request whose _meta has no trace context
// continues the one in its HTTP headers.
func TestGatewayTraceFromHeader(t *testing.T) {
	rig := startGatewayRig(t, testserver.New(testserver.Options{}), mcpotel.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, agent := rig.tracer.Start(ctx, "agent turn")
	agent.End()
	cs := rig.connect(t, "2026-07-28", http.Header{"Traceparent": {traceparent(agent.SpanContext())}})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		t.Fatal(err)
	}
	srv := rig.span(t, "tools/call whoami", trace.SpanKindServer)
	if srv.Parent().SpanID() != agent.SpanContext().SpanID() {
		t.Errorf("server span parent %s; want the header's %s", srv.Parent().SpanID(), agent.SpanContext().SpanID())
	}
	up := rig.span(t, "tools/call whoami", trace.SpanKindClient)
	if got := whoamiMeta(t, res)["traceparent"]; got != traceparent(up.SpanContext()) {
		t.Errorf("the server saw traceparent %v; want %s", got, traceparent(up.SpanContext()))
	}
}

// TestGatewayHostileTraceparent: a traceparent that is malformed, huge or
// not a string is ignored: the call succeeds, the gateway's span starts a
// trace of its own, and the server sees that trace, not the client's
// value.
func TestGatewayHostileTraceparent(t *testing.T) {
	rig := startGatewayRig(t, testserver.New(testserver.Options{}), mcpotel.Options{})
	cs := rig.connect(t, "2026-07-28", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, bad := range []any{
		"garbage",
		"00-" + strings.Repeat("a", 32) + "-" + strings.Repeat("b", 16) + "-01" + strings.Repeat("-x", 1<<19),
		"00-00000000000000000000000000000000-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
		strings.Repeat("0", 1<<20),
		42,
		map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		[]any{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		nil,
	} {
		rig.rec.Reset()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"traceparent": bad, "tracestate": bad}})
		if err != nil || res.IsError {
			t.Fatalf("case %d: %v %v", i, err, res)
		}
		srv := rig.span(t, "tools/call whoami", trace.SpanKindServer)
		if srv.Parent().IsValid() {
			t.Errorf("case %d: the server span has parent %v", i, srv.Parent())
		}
		up := rig.span(t, "tools/call whoami", trace.SpanKindClient)
		if got := whoamiMeta(t, res)["traceparent"]; got != traceparent(up.SpanContext()) {
			t.Errorf("case %d: the server saw traceparent %.80v; want the gateway's %s", i, got, traceparent(up.SpanContext()))
		}
	}
}

// TestGatewayErrorsAndMetrics: a tool error, an unknown tool (a JSON-RPC
// error -32602, its made-up name on no span or metric) and a listing are
// recorded on the server spans and in mcp.server.operation.duration, whose
// points name no principal unless Options.Principals says so.
func TestGatewayErrorsAndMetrics(t *testing.T) {
	for _, tt := range []struct {
		name       string
		principals []string
		want       string // mcpadapter.principal, "" for none
	}{
		{"default", nil, ""},
		{"listed", []string{"alice"}, "alice"},
		{"other", []string{"svc-batch"}, "_OTHER"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rig := startGatewayRig(t, testserver.New(testserver.Options{}), mcpotel.Options{Principals: tt.principals})
			cs := rig.connect(t, "2026-07-28", nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"message": "boom"}})
			if err != nil || !res.IsError {
				t.Fatalf("fail: %v %v", res, err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "made-up-name"}); err == nil {
				t.Fatal("an unknown tool was called")
			}

			fail := rig.span(t, "tools/call fail", trace.SpanKindServer)
			if a := attrs(fail); a["error.type"].AsString() != "tool_error" || fail.Status().Code != codes.Error {
				t.Errorf("fail span: error.type %q status %v", a["error.type"].AsString(), fail.Status())
			}
			unknown := rig.span(t, "tools/call", trace.SpanKindServer)
			a := attrs(unknown)
			if a["error.type"].AsString() != "-32602" || a["rpc.response.status_code"].AsString() != "-32602" || unknown.Status().Code != codes.Error {
				t.Errorf("unknown tool span: error.type %q code %q status %v", a["error.type"].AsString(), a["rpc.response.status_code"].AsString(), unknown.Status())
			}
			if _, ok := a["gen_ai.tool.name"]; ok {
				t.Errorf("a made-up tool name is on the span: %v", a["gen_ai.tool.name"])
			}
			if got := attrs(rig.span(t, "tools/list", trace.SpanKindServer))["mcpadapter.principal"].AsString(); got != tt.want {
				t.Errorf("tools/list span principal %q; want %q", got, tt.want)
			}

			var rm metricdata.ResourceMetrics
			if err := rig.reader.Collect(ctx, &rm); err != nil {
				t.Fatal(err)
			}
			counts := map[string]uint64{}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name != mcpotel.MetricServerDuration {
						continue
					}
					for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
						method, _ := dp.Attributes.Value("mcp.method.name")
						tool, _ := dp.Attributes.Value("gen_ai.tool.name")
						et, _ := dp.Attributes.Value("error.type")
						counts[method.AsString()+" "+tool.AsString()+" "+et.AsString()] += dp.Count
						p, ok := dp.Attributes.Value("mcpadapter.principal")
						if ok != (tt.want != "") || p.AsString() != tt.want {
							t.Errorf("point %v: principal %q; want %q", dp.Attributes.ToSlice(), p.AsString(), tt.want)
						}
						if s, _ := dp.Attributes.Value("mcpadapter.server"); tool.AsString() == "fail" && s.AsString() != "up" {
							t.Errorf("fail point: mcpadapter.server %q", s.AsString())
						}
						if _, ok := dp.Attributes.Value("mcp.session.id"); ok {
							t.Error("a session id on a metric")
						}
					}
				}
			}
			for _, k := range []string{"tools/list  ", "tools/call fail tool_error", "tools/call  -32602"} {
				if counts[k] != 1 {
					t.Errorf("%q: count %d; want 1 (all: %v)", k, counts[k], counts)
				}
			}
		})
	}
}

// traceServer is a server whose tool, prompt and resource answer with the
// traceparent in the request's _meta.
func traceServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "trace", Version: "1"}, nil)
	tp := func(m mcp.Meta) string { s, _ := m["traceparent"].(string); return s }
	srv.AddTool(&mcp.Tool{Name: "trace", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tp(r.Params.Meta)}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "trace"}, func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: tp(r.Params.Meta)}}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://trace", Name: "trace"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://trace", Text: tp(r.Params.Meta)}}}, nil
	})
	return srv
}

// TestGatewayTraceWithoutClientTelemetry: with Telemetry on the gateway
// but none on its servers' clients, the server of a tools/call,
// prompts/get and resources/read sees the gateway's server span as its
// parent, in the client's trace.
func TestGatewayTraceWithoutClientTelemetry(t *testing.T) {
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			rig := startGatewayRigClient(t, traceServer(), mcpotel.Options{}, false)
			cs := rig.connect(t, v, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, agent := rig.tracer.Start(ctx, "agent turn")
			agent.End()
			meta := mcp.Meta{"traceparent": traceparent(agent.SpanContext())}

			call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "trace", Meta: meta})
			if err != nil {
				t.Fatal(err)
			}
			prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "trace", Meta: meta})
			if err != nil {
				t.Fatal(err)
			}
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://trace", Meta: meta})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				span string
				seen string
			}{
				{"tools/call trace", call.Content[0].(*mcp.TextContent).Text},
				{"prompts/get trace", prompt.Messages[0].Content.(*mcp.TextContent).Text},
				{"resources/read", read.Contents[0].Text},
			} {
				s := rig.span(t, c.span, trace.SpanKindServer)
				if s.Parent().SpanID() != agent.SpanContext().SpanID() {
					t.Errorf("%s: parent %s; want the client's %s", c.span, s.Parent().SpanID(), agent.SpanContext().SpanID())
				}
				if want := traceparent(s.SpanContext()); c.seen != want {
					t.Errorf("%s: the server saw %q; want %q (the gateway's span)", c.span, c.seen, want)
				}
				if a := attrs(s); a["mcpadapter.server"].AsString() != "up" {
					t.Errorf("%s: mcpadapter.server %q", c.span, a["mcpadapter.server"].AsString())
				}
			}
			if got := attrs(rig.span(t, "resources/read", trace.SpanKindServer))["mcp.resource.uri"].AsString(); got != "test://trace" {
				t.Errorf("mcp.resource.uri %q", got)
			}
		})
	}
}

// TestGatewayHostileTracestate: a client's valid traceparent with a
// tracestate that cannot be read (malformed, huge, too many members, not
// a string), or with baggage, continues the client's trace, and the
// server gets the gateway's trace context alone: no tracestate the
// gateway did not read, no baggage. A valid tracestate reaches the server
// as the gateway's span carries it.
func TestGatewayHostileTracestate(t *testing.T) {
	rig := startGatewayRig(t, testserver.New(testserver.Options{}), mcpotel.Options{})
	for _, v := range eras {
		cs := rig.connect(t, v, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		members := make([]string, 40)
		for i := range members {
			members[i] = fmt.Sprintf("k%d=v", i)
		}
		for i, c := range []struct {
			state any
			want  any // the tracestate the server gets, nil for none
		}{
			{"not a tracestate", nil},
			{"rojo=1,rojo=2", nil},
			{strings.Join(members, ","), nil},
			{"rojo=" + strings.Repeat("a", 1<<20), nil},
			{42, nil},
			{map[string]any{"rojo": "1"}, nil},
			{"rojo=00f067aa0ba902b7", "rojo=00f067aa0ba902b7"},
		} {
			rig.rec.Reset()
			_, agent := rig.tracer.Start(ctx, "agent turn")
			agent.End()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"traceparent": traceparent(agent.SpanContext()), "tracestate": c.state, "baggage": "user=alice"}})
			if err != nil || res.IsError {
				t.Fatalf("%s case %d: %v %v", v, i, err, res)
			}
			srv := rig.span(t, "tools/call whoami", trace.SpanKindServer)
			if srv.Parent().SpanID() != agent.SpanContext().SpanID() {
				t.Errorf("%s case %d: the server span's parent is %s; want the client's %s", v, i, srv.Parent().SpanID(), agent.SpanContext().SpanID())
			}
			seen := whoamiMeta(t, res)
			up := rig.span(t, "tools/call whoami", trace.SpanKindClient)
			if seen["traceparent"] != traceparent(up.SpanContext()) || seen["tracestate"] != c.want || seen["baggage"] != nil {
				t.Errorf("%s case %d: the server saw traceparent %v, tracestate %.80v, baggage %v; want %s, %v, none",
					v, i, seen["traceparent"], seen["tracestate"], seen["baggage"], traceparent(up.SpanContext()), c.want)
			}
		}
	}
}

// codeServer is a server whose tool "code" fails with the JSON-RPC error
// code its arguments name, as a hostile server may (or one that passes
// on the error a client answered its question with).
func codeServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "codes", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "code"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Code int64 `json:"code"`
	}) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: in.Code, Message: "chosen"}
	})
	return srv
}

// TestGatewayErrorCodesBounded: JSON-RPC error codes a server chooses
// outside the range JSON-RPC reserves (-32768 to -32000) make one value of
// error.type and rpc.response.status_code in the gateway's and its
// clients' metrics, "_OTHER", whatever their number; a reserved code
// keeps its value. Each span names the code the client was answered
// with.
func TestGatewayErrorCodesBounded(t *testing.T) {
	rig := startGatewayRig(t, codeServer(), mcpotel.Options{})
	cs := rig.connect(t, "2025-11-25", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	codes := []int64{-32602, -32001}
	for i := range 20 {
		codes = append(codes, int64(1000+i), int64(-1-i), int64(-40000-i))
	}
	for _, code := range codes {
		rig.rec.Reset()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "code", Arguments: map[string]any{"code": code}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != code {
			t.Fatalf("code %d: the client got %v", code, err)
		}
		if got := attrs(rig.span(t, "tools/call code", trace.SpanKindServer))["rpc.response.status_code"].AsString(); got != strconv.FormatInt(code, 10) {
			t.Errorf("code %d: the span's status code is %q", code, got)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := rig.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{mcpotel.MetricServerDuration, mcpotel.MetricDuration} {
		values := map[string]uint64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != name {
					continue
				}
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					if tool, _ := dp.Attributes.Value("gen_ai.tool.name"); tool.AsString() != "code" {
						continue
					}
					et, _ := dp.Attributes.Value("error.type")
					sc, _ := dp.Attributes.Value("rpc.response.status_code")
					values[et.AsString()+" "+sc.AsString()] += dp.Count
				}
			}
		}
		want := map[string]uint64{"-32602 -32602": 1, "-32001 -32001": 1, "_OTHER _OTHER": 60}
		if name == mcpotel.MetricDuration { // the client's have no status code
			want = map[string]uint64{"-32602 ": 1, "-32001 ": 1, "_OTHER ": 60}
		}
		if fmt.Sprint(values) != fmt.Sprint(want) {
			t.Errorf("%s: points by error.type and status code %v; want %v", name, values, want)
		}
	}
}

// TestGatewayAmbientSpan: a span already on the HTTP request's context
// (the HTTP server span of the program that mounts the gateway) is the
// parent of the gateway's server span when the request carries no trace
// context, and a link of it when the request's _meta carries the
// client's, which is then the parent. It is the span of the request's
// own HTTP POST, also in a handshake-era session (whose requests go-sdk
// handles in the context of the POST that opened the session).
func TestGatewayAmbientSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New([]gateway.Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &gateway.Options{
		Telemetry: tel, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tracer := tp.Tracer("test")
	called := make(chan struct{}, 4) // a tools/call's HTTP span ended
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		r.Body = io.NopCloser(bytes.NewReader(body))
		ctx, span := tracer.Start(r.Context(), "HTTP "+r.Method+" "+m.Method, trace.WithSpanKind(trace.SpanKindServer))
		g.ServeHTTP(w, r.WithContext(ctx))
		span.End()
		if m.Method == "tools/call" {
			called <- struct{}{}
		}
	}))
	t.Cleanup(ts.Close)
	for _, v := range eras {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		_, agent := tracer.Start(ctx, "agent turn")
		agent.End()
		for _, withClient := range []bool{false, true} {
			rec.Reset()
			p := &mcp.CallToolParams{Name: "whoami"}
			if withClient {
				p.Meta = mcp.Meta{"traceparent": traceparent(agent.SpanContext())}
			}
			if _, err := cs.CallTool(ctx, p); err != nil {
				t.Fatal(err)
			}
			select { // the HTTP span ends once the answer is written
			case <-called:
			case <-ctx.Done():
				t.Fatal("the tools/call's HTTP span never ended")
			}
			var srv, httpSpan sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				switch {
				case s.Name() == "tools/call whoami" && s.SpanKind() == trace.SpanKindServer:
					srv = s
				case s.Name() == "HTTP POST tools/call":
					httpSpan = s
				}
			}
			if srv == nil || httpSpan == nil {
				t.Fatalf("%s: spans %v", v, spanNames(rec))
			}
			var links []trace.SpanID
			for _, l := range srv.Links() {
				links = append(links, l.SpanContext.SpanID())
			}
			if !withClient && (srv.Parent().SpanID() != httpSpan.SpanContext().SpanID() || len(links) != 0) {
				t.Errorf("%s, no client trace: parent %s, links %v; want the HTTP span %s, none", v, srv.Parent().SpanID(), links, httpSpan.SpanContext().SpanID())
			}
			if withClient && (srv.Parent().SpanID() != agent.SpanContext().SpanID() || len(links) != 1 || links[0] != httpSpan.SpanContext().SpanID()) {
				t.Errorf("%s, client trace: parent %s, links %v; want the client's %s, the HTTP span %s", v, srv.Parent().SpanID(), links, agent.SpanContext().SpanID(), httpSpan.SpanContext().SpanID())
			}
		}
	}
}
