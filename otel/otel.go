// Package mcpotel reports the work of mcpadapter clients to OpenTelemetry:
// a span for each connect, listing and tool call, the duration of each as
// a metric, and the W3C trace context carried to the server in each tool
// call's params._meta ("traceparent", "tracestate"), so the server's spans
// join the caller's trace.
//
// It follows the OpenTelemetry semantic conventions for MCP (client side,
// status: development):
//
//   - span name "{mcp.method.name} {gen_ai.tool.name}" ("tools/call
//     search"), or the method alone; kind CLIENT; status Error with the
//     error's text on failure (a tool's own error result too).
//   - attributes mcp.method.name, mcp.session.id (when the connection has
//     one), mcp.protocol.version, network.transport ("pipe" for stdio,
//     "tcp" for HTTP, "inproc" in-process), network.protocol.name ("http"),
//     server.address and server.port (HTTP), error.type; for tools/call
//     also gen_ai.tool.name and gen_ai.operation.name "execute_tool"; and
//     mcpadapter.server, the server's name in the adapter.
//   - metric mcp.client.operation.duration: a histogram in seconds with the
//     attributes above that have few values (method, tool, operation,
//     error.type, protocol version, transport). Its count by error.type is
//     the errors by kind: "tool_error", a JSON-RPC code such as "-32602"
//     (one JSON-RPC does not reserve is "_OTHER"), "timeout",
//     "transport", ... (mcpadapter.ErrorType).
//
// Use it as the Telemetry of a client:
//
//	tel, err := mcpotel.New(nil) // the global providers and W3C trace context
//	if err != nil {
//		return err
//	}
//	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Telemetry: tel})
//
// The same Telemetry observes a gateway (module
// github.com/mcpadapter/mcpadapter/gateway) as its Options.Telemetry, a
// mcpadapter.ServerTelemetry: a SERVER span per client request that
// continues the client's trace and carries it on to the servers, and the
// histograms mcp.server.operation.duration (StartServerOperation) and
// mcp.server.session.duration (EndServerSession, for each handshake-era
// client's session). Set it
// as the gateway's Options.Client.Telemetry too for a CLIENT span of each
// request to a server:
//
//	gw, err := gateway.New(servers, &gateway.Options{
//		Telemetry: tel,
//		Client:    &mcpadapter.ClientOptions{Telemetry: tel},
//	})
//
// The types of that hook are in the core module, so that this module
// needs the gateway's only for its tests and examples, and a program that
// observes clients only compiles no gateway.
//
// The core and gateway modules do not depend on OpenTelemetry: a client
// or gateway without Telemetry pays nothing.
package mcpotel

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/mcpadapter/mcpadapter/otel"

// The attribute keys of the semantic conventions used here.
const (
	keyMethod          = attribute.Key("mcp.method.name")
	keySession         = attribute.Key("mcp.session.id")
	keyProtocolVersion = attribute.Key("mcp.protocol.version")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyOperationName   = attribute.Key("gen_ai.operation.name")
	keyErrorType       = attribute.Key("error.type")
	keyTransport       = attribute.Key("network.transport")
	keyProtocolName    = attribute.Key("network.protocol.name")
	keyServerAddress   = attribute.Key("server.address")
	keyServerPort      = attribute.Key("server.port")
	keyServerName      = attribute.Key("mcpadapter.server")
	keyPromptName      = attribute.Key("gen_ai.prompt.name")
	keyResourceURI     = attribute.Key("mcp.resource.uri")
	keyStatusCode      = attribute.Key("rpc.response.status_code")
	keyPrincipal       = attribute.Key("mcpadapter.principal")
	keyRequestID       = attribute.Key("jsonrpc.request.id")
	keyClientAddress   = attribute.Key("client.address")
	keyClientPort      = attribute.Key("client.port")
	keyPeerAddress     = attribute.Key("network.peer.address")
	keyPeerPort        = attribute.Key("network.peer.port")
)

// MetricDuration is the name of the duration histogram of a client's
// requests.
const MetricDuration = "mcp.client.operation.duration"

// MetricServerDuration is the name of the duration histogram of the
// requests a server (the gateway) answers.
const MetricServerDuration = "mcp.server.operation.duration"

// MetricServerSessionDuration is the name of the duration histogram of
// the sessions of the clients of a server (the gateway).
const MetricServerSessionDuration = "mcp.server.session.duration"

// sessionBuckets are the bucket boundaries of
// mcp.server.session.duration, in seconds (the conventions advise none):
// from a second to a day.
var sessionBuckets = []float64{1, 5, 15, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400}

// durationBuckets are the bucket boundaries the conventions advise for
// mcp.client.operation.duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Options configures New. A nil *Options uses OpenTelemetry's global
// providers and the W3C trace context.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the duration histogram; nil means
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator writes the trace context into a tool call's _meta; nil
	// means the W3C trace context (propagation.TraceContext), whatever the
	// global propagator is, since that is what MCP servers read.
	Propagator propagation.TextMapPropagator
	// Principals are the principals a server's spans and metrics name
	// (attribute mcpadapter.principal); a request of any other principal
	// is named "_OTHER". None (the default): no principal is named. A
	// principal is a user: as many values as there are users, too many
	// for a metric's attributes (each value makes a time series of every
	// combination with the others), and personal data in every span.
	// List the few it is worth telling apart (service accounts, say).
	Principals []string
}

// Telemetry implements mcpadapter.Telemetry (a client's requests) and
// mcpadapter.ServerSessionTelemetry (the requests a gateway answers, and
// its clients' sessions) with OpenTelemetry.
type Telemetry struct {
	tracer     trace.Tracer
	duration   metric.Float64Histogram
	server     metric.Float64Histogram
	session    metric.Float64Histogram
	propagator propagation.TextMapPropagator
	principals map[string]bool
}

var (
	_ mcpadapter.Telemetry              = (*Telemetry)(nil)
	_ mcpadapter.ServerTelemetry        = (*Telemetry)(nil)
	_ mcpadapter.ServerSessionTelemetry = (*Telemetry)(nil)
)

// New returns a Telemetry for ClientOptions.Telemetry; opts may be nil.
func New(opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.TraceContext{}
	}
	hist, err := o.MeterProvider.Meter(ScopeName).Float64Histogram(MetricDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request as observed on the client, from sending it to its answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, err
	}
	server, err := o.MeterProvider.Meter(ScopeName).Float64Histogram(MetricServerDuration,
		metric.WithUnit("s"),
		metric.WithDescription("MCP request duration as observed on the receiver from the time it was received until the result is sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, err
	}
	session, err := o.MeterProvider.Meter(ScopeName).Float64Histogram(MetricServerSessionDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP session as observed on the MCP server."),
		metric.WithExplicitBucketBoundaries(sessionBuckets...))
	if err != nil {
		return nil, err
	}
	t := &Telemetry{tracer: o.TracerProvider.Tracer(ScopeName), duration: hist, server: server, session: session, propagator: o.Propagator}
	if len(o.Principals) > 0 {
		t.principals = make(map[string]bool, len(o.Principals))
		for _, p := range o.Principals {
			t.principals[p] = true
		}
	}
	return t, nil
}

// StartOperation starts op's span.
func (t *Telemetry) StartOperation(ctx context.Context, op mcpadapter.Operation) (context.Context, func(mcpadapter.OperationResult)) {
	name := op.Method
	common := []attribute.KeyValue{keyMethod.String(op.Method)}
	if op.Tool != "" {
		name += " " + op.Tool
		common = append(common, keyToolName.String(op.Tool), keyOperationName.String("execute_tool"))
	}
	if tr := networkTransport(op.Transport); tr != "" {
		common = append(common, keyTransport.String(tr))
	}
	attrs := append([]attribute.KeyValue{keyServerName.String(op.Server)}, common...)
	attrs = append(attrs, serverAddress(op)...)
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...), trace.WithTimestamp(start))
	return ctx, func(r mcpadapter.OperationResult) {
		var end []attribute.KeyValue
		if r.SessionID != "" {
			span.SetAttributes(keySession.String(r.SessionID))
		}
		if r.ProtocolVersion != "" {
			end = append(end, keyProtocolVersion.String(r.ProtocolVersion))
		}
		if r.ErrorType != "" {
			end = append(end, keyErrorType.String(r.ErrorType))
			msg := "the tool reported an error"
			if r.Err != nil {
				msg = r.Err.Error()
				span.RecordError(r.Err)
			}
			span.SetStatus(codes.Error, msg)
		}
		span.SetAttributes(end...)
		span.End()
		t.duration.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(append(common, end...)...))
	}
}

// InjectMeta writes the trace context of ctx into meta.
func (t *Telemetry) InjectMeta(ctx context.Context, meta map[string]any) {
	t.propagator.Inject(ctx, metaCarrier(meta))
}

// metaCarrier is a _meta map as a propagation carrier.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// networkTransport returns network.transport for an mcpadapter transport.
func networkTransport(transport string) string {
	switch transport {
	case "stdio":
		return "pipe"
	case "streamable-http", "sse":
		return "tcp"
	case "in-process":
		return "inproc"
	}
	return ""
}

// serverAddress returns network.protocol.name, server.address and
// server.port for an HTTP server.
func serverAddress(op mcpadapter.Operation) []attribute.KeyValue {
	if op.URL == "" {
		return nil
	}
	u, err := url.Parse(op.URL)
	if err != nil {
		return nil
	}
	out := []attribute.KeyValue{keyProtocolName.String("http"), keyServerAddress.String(u.Hostname())}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if p, err := strconv.Atoi(port); err == nil {
		out = append(out, keyServerPort.Int(p))
	}
	return out
}
