package mcpotel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	mcpotel "github.com/mcpadapter/mcpadapter/otel"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// bodyRecorder is an HTTP transport that keeps the JSON-RPC id of each
// request it sends, by method.
type bodyRecorder struct {
	header http.Header
	mu     sync.Mutex
	ids    map[string][]string
}

func (b *bodyRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range b.header {
		r.Header[k] = v
	}
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method != "" && len(m.ID) > 0 {
			b.mu.Lock()
			b.ids[m.Method] = append(b.ids[m.Method], string(m.ID))
			b.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (b *bodyRecorder) sent(method string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ids[method]...)
}

// metricPoints returns the points of the histogram name.
func metricPoints(t *testing.T, reader *sdkmetric.ManualReader, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []metricdata.HistogramDataPoint[float64]
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				out = append(out, m.Data.(metricdata.Histogram[float64]).DataPoints...)
			}
		}
	}
	return out
}

// sessionPoints waits until the session histogram has n sessions, and
// returns its points.
func sessionPoints(t *testing.T, reader *sdkmetric.ManualReader, n uint64) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pts := metricPoints(t, reader, mcpotel.MetricServerSessionDuration)
		var count uint64
		for _, p := range pts {
			count += p.Count
		}
		if count >= n || time.Now().After(deadline) {
			if count != n {
				t.Fatalf("%d sessions recorded; want %d", count, n)
			}
			return pts
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGatewayRequestIDAndPeer: over HTTP, a client's requests, of both
// eras, have server spans with the JSON-RPC id the client sent
// (jsonrpc.request.id) and the address and port it sent them from
// (client.address, client.port, network.peer.address,
// network.peer.port); neither is on the duration metric.
func TestGatewayRequestIDAndPeer(t *testing.T) {
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			rig := startGatewayRig(t, testserver.New(testserver.Options{}), mcpotel.Options{})
			rt := &bodyRecorder{header: http.Header{"Authorization": {"Bearer token"}}, ids: map[string][]string{}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rig.url, HTTPClient: &http.Client{Transport: rt}}, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
				t.Fatal(err)
			}
			sent := rt.sent("tools/call")
			if len(sent) != 1 {
				t.Fatalf("the client sent %d tools/call requests", len(sent))
			}
			a := attrs(rig.span(t, "tools/call echo", trace.SpanKindServer))
			if got := a["jsonrpc.request.id"].AsString(); got != strings.Trim(sent[0], `"`) || got == "" {
				t.Errorf("jsonrpc.request.id %q; the client sent id %s", got, sent[0])
			}
			if a["client.address"].AsString() != "127.0.0.1" || a["network.peer.address"].AsString() != "127.0.0.1" {
				t.Errorf("client.address %q network.peer.address %q; want 127.0.0.1", a["client.address"].AsString(), a["network.peer.address"].AsString())
			}
			if p := a["client.port"].AsInt64(); p <= 0 || p > 65535 || a["network.peer.port"].AsInt64() != p {
				t.Errorf("client.port %d network.peer.port %d", p, a["network.peer.port"].AsInt64())
			}
			for _, dp := range metricPoints(t, rig.reader, mcpotel.MetricServerDuration) {
				for _, k := range []attribute.Key{"jsonrpc.request.id", "client.address", "client.port", "network.peer.address", "network.peer.port"} {
					if _, ok := dp.Attributes.Value(k); ok {
						t.Errorf("%s on the duration metric: %v", k, dp.Attributes.ToSlice())
					}
				}
			}
		})
	}
}

// TestGatewaySessionDuration: a handshake-era client's session over HTTP
// is one point of mcp.server.session.duration once the client ends it,
// with its protocol version and transport and no error; a 2026-07-28
// client has no session and records none.
func TestGatewaySessionDuration(t *testing.T) {
	rig := startGatewayRig(t, testserver.New(testserver.Options{}), mcpotel.Options{Principals: []string{"alice"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	modern := rig.connect(t, "2026-07-28", nil)
	if _, err := modern.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cs := rig.connect(t, "2025-11-25", nil)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	pts := sessionPoints(t, rig.reader, 1)
	got := pts[0].Attributes
	want := attribute.NewSet(
		attribute.String("mcp.protocol.version", "2025-11-25"),
		attribute.String("network.transport", "tcp"),
		attribute.String("network.protocol.name", "http"),
		attribute.String("mcpadapter.principal", "alice"),
	)
	if !got.Equals(&want) {
		t.Errorf("session point attributes %v; want %v", got.ToSlice(), want.ToSlice())
	}
	if pts[0].Sum < 0.05 || pts[0].Sum > 30 {
		t.Errorf("session duration %.3fs; want from 0.05s (the client waited) to 30s", pts[0].Sum)
	}
	if err := modern.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	sessionPoints(t, rig.reader, 1)
}

// stdioRig is a gateway with telemetry serving one client over pipes,
// the client's side written and read as JSON lines.
type stdioRig struct {
	rec    *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	in     io.WriteCloser // the client's requests
	out    *bufio.Scanner // the gateway's answers
	done   chan error
}

func startStdioRig(t *testing.T) *stdioRig {
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
	g, err := gateway.New([]gateway.Server{{Name: "up", Target: testserver.New(testserver.Options{Era: testserver.Legacy})}}, &gateway.Options{
		Telemetry: tel,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cr, gw := io.Pipe()
	gr, cw := io.Pipe()
	rig := &stdioRig{rec: rec, reader: reader, in: cw, out: bufio.NewScanner(cr), done: make(chan error, 1)}
	rig.out.Buffer(nil, 1<<20)
	go func() { rig.done <- g.ServeStdio(ctx, gr, gw) }()
	t.Cleanup(func() {
		_ = cw.Close()
		_ = cr.Close()
		<-rig.done
	})
	return rig
}

// call sends a request and reads lines until its answer.
func (r *stdioRig) call(t *testing.T, msg string) {
	t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(r.in, msg+"\n"); err != nil {
		t.Fatal(err)
	}
	for r.out.Scan() {
		var a struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(r.out.Bytes(), &a) == nil && a.Method == "" && bytes.Equal(a.ID, m.ID) {
			return
		}
	}
	t.Fatalf("no answer to %s: %v", msg, r.out.Err())
}

// TestGatewayStdioRequestIDAndSession: over stdio, each request's server
// span has the id the client gave it, a number's or a string's, and no
// client address; the session is one point of
// mcp.server.session.duration (transport "pipe") once the client closes
// its input.
func TestGatewayStdioRequestIDAndSession(t *testing.T) {
	rig := startStdioRig(t)
	rig.call(t, `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, err := io.WriteString(rig.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	rig.call(t, `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`)
	rig.call(t, `{"jsonrpc":"2.0","id":"call \"x\"","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	want := map[string]string{"initialize": "init-1", "tools/list": "42", "tools/call echo": `call "x"`}
	for name, id := range want {
		var found []sdktrace.ReadOnlySpan
		for _, s := range rig.rec.Ended() {
			if s.Name() == name && s.SpanKind() == trace.SpanKindServer {
				found = append(found, s)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%d server spans %q; spans: %v", len(found), name, spanNames(rig.rec))
		}
		a := attrs(found[0])
		if got := a["jsonrpc.request.id"].AsString(); got != id {
			t.Errorf("%s: jsonrpc.request.id %q; want %q", name, got, id)
		}
		if _, ok := a["client.address"]; ok {
			t.Errorf("%s: client.address over stdio: %v", name, a["client.address"])
		}
	}
	_ = rig.in.Close()
	select {
	case err := <-rig.done:
		rig.done <- err // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio did not return once the client closed its input")
	}
	pts := sessionPoints(t, rig.reader, 1)
	got := pts[0].Attributes
	wantAttrs := attribute.NewSet(attribute.String("mcp.protocol.version", "2025-06-18"), attribute.String("network.transport", "pipe"))
	if !got.Equals(&wantAttrs) {
		t.Errorf("session point attributes %v; want %v", got.ToSlice(), wantAttrs.ToSlice())
	}
}

// TestGatewayStdioSessionBroken: a stdio session whose client sends what
// is not JSON ends, and is one point of mcp.server.session.duration with
// error.type "transport".
func TestGatewayStdioSessionBroken(t *testing.T) {
	rig := startStdioRig(t)
	rig.call(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, err := io.WriteString(rig.in, "{not json\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-rig.done:
		rig.done <- err // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio did not return once the client sent what is not JSON")
	}
	pts := sessionPoints(t, rig.reader, 1)
	got := pts[0].Attributes
	want := attribute.NewSet(attribute.String("mcp.protocol.version", "2025-11-25"), attribute.String("network.transport", "pipe"), attribute.String("error.type", "transport"))
	if !got.Equals(&want) {
		t.Errorf("session point attributes %v; want %v", got.ToSlice(), want.ToSlice())
	}
}
