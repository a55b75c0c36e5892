package mcpotel

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// StartServerOperation starts the server span of a client's request to
// a gateway (mcpadapter.ServerOperation). Its parent is the trace context
// in the request's _meta ("traceparent", "tracestate") read with
// Options.Propagator, else the one in its HTTP headers, else the span of
// the request's HTTP context (op.HTTPContext; over stdio, ctx's); that
// span, when it is not the parent (an HTTP server span, say), is linked.
// A trace context that cannot be read (malformed, not a string) is
// ignored.
//
// The span is named "{mcp.method.name} {gen_ai.tool.name}" (or the
// prompt's name, or the method alone), of kind SERVER, with
// mcp.method.name, gen_ai.tool.name and gen_ai.operation.name
// "execute_tool" (tools/call), gen_ai.prompt.name, mcp.resource.uri,
// mcp.session.id, mcp.protocol.version, jsonrpc.request.id,
// network.transport ("tcp" or "pipe"), network.protocol.name ("http"),
// client.address, client.port, network.peer.address and
// network.peer.port (the HTTP request's RemoteAddr), mcpadapter.server
// (the server behind the gateway that answers: the gateway's name for
// it), and at the end error.type and rpc.response.status_code (the
// JSON-RPC error code).
//
// The histogram mcp.server.operation.duration has the attributes with few
// values: method, tool, prompt, operation, mcpadapter.server, error.type,
// rpc.response.status_code (a code JSON-RPC does not reserve is "_OTHER"
// there: a server behind chooses it), protocol version, transport; not
// the session, the request id, the client's address nor the resource
// URI, and the principal only as Options.Principals says.
func (t *Telemetry) StartServerOperation(ctx context.Context, op mcpadapter.ServerOperation) (context.Context, func(mcpadapter.ServerOperationResult)) {
	start := time.Now()
	if op.HTTPContext != nil {
		// The span of this request's HTTP context, not one ctx may have
		// of another request's (the one that opened the session).
		ctx = trace.ContextWithSpan(ctx, trace.SpanFromContext(op.HTTPContext))
	}
	ambient := trace.SpanContextFromContext(ctx)
	parent := ctx
	if c := t.propagator.Extract(ctx, metaCarrier(op.Meta)); extracted(c, ambient) {
		parent = c
	} else if op.Header != nil {
		if c := t.propagator.Extract(ctx, propagation.HeaderCarrier(op.Header)); extracted(c, ambient) {
			parent = c
		}
	}
	name := op.Method
	common := []attribute.KeyValue{keyMethod.String(op.Method)}
	switch {
	case op.Tool != "":
		name += " " + op.Tool
		common = append(common, keyToolName.String(op.Tool), keyOperationName.String("execute_tool"))
	case op.Prompt != "":
		name += " " + op.Prompt
		common = append(common, keyPromptName.String(op.Prompt))
	}
	if op.Server != "" {
		common = append(common, keyServerName.String(op.Server))
	}
	if op.ProtocolVersion != "" {
		common = append(common, keyProtocolVersion.String(op.ProtocolVersion))
	}
	switch op.Transport {
	case "streamable-http":
		common = append(common, keyTransport.String("tcp"), keyProtocolName.String("http"))
	case "stdio":
		common = append(common, keyTransport.String("pipe"))
	}
	if p := t.principal(op.Principal); p != "" {
		common = append(common, keyPrincipal.String(p))
	}
	attrs := common
	if op.SessionID != "" {
		attrs = append(attrs[:len(attrs):len(attrs)], keySession.String(op.SessionID))
	}
	if op.ResourceURI != "" {
		attrs = append(attrs[:len(attrs):len(attrs)], keyResourceURI.String(op.ResourceURI))
	}
	if op.RequestID != "" {
		attrs = append(attrs[:len(attrs):len(attrs)], keyRequestID.String(op.RequestID))
	}
	if op.RemoteAddr != "" {
		attrs = append(attrs[:len(attrs):len(attrs)], peerAddress(op.RemoteAddr)...)
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...), trace.WithTimestamp(start)}
	if pc := trace.SpanContextFromContext(parent); ambient.IsValid() && !ambient.Equal(pc) {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
	}
	ctx, span := t.tracer.Start(parent, name, opts...)
	return ctx, func(r mcpadapter.ServerOperationResult) {
		end := common
		if r.ErrorType != "" {
			end = append(end[:len(end):len(end)], keyErrorType.String(r.ErrorType))
			msg := "the tool reported an error"
			if r.Err != nil {
				msg = r.Err.Error()
				span.RecordError(r.Err)
			}
			span.SetStatus(codes.Error, msg)
		}
		span.SetAttributes(end[len(common):]...)
		if r.Code != 0 {
			code := strconv.FormatInt(r.Code, 10)
			span.SetAttributes(keyStatusCode.String(code))
			if r.Code < -32768 || r.Code > -32000 {
				code = "_OTHER"
			}
			end = append(end[:len(end):len(end)], keyStatusCode.String(code))
		}
		span.End()
		t.server.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(end...))
	}
}

// peerAddress returns client.address and network.peer.address (and their
// ports) for an HTTP request's RemoteAddr: the gateway does not read
// Forwarded headers, so the client it knows is the peer.
func peerAddress(remote string) []attribute.KeyValue {
	host, port, err := net.SplitHostPort(remote)
	if err != nil {
		return []attribute.KeyValue{keyClientAddress.String(remote), keyPeerAddress.String(remote)}
	}
	out := []attribute.KeyValue{keyClientAddress.String(host), keyPeerAddress.String(host)}
	if p, err := strconv.Atoi(port); err == nil {
		out = append(out, keyClientPort.Int(p), keyPeerPort.Int(p))
	}
	return out
}

// EndServerSession records the duration of a client's session in the
// histogram mcp.server.session.duration (mcpadapter.ServerSessionTelemetry),
// with mcp.protocol.version, network.transport, network.protocol.name,
// error.type when it ended with an error, and mcpadapter.principal only
// as Options.Principals says.
func (t *Telemetry) EndServerSession(ctx context.Context, s mcpadapter.ServerSessionEnd) {
	var attrs []attribute.KeyValue
	if s.ProtocolVersion != "" {
		attrs = append(attrs, keyProtocolVersion.String(s.ProtocolVersion))
	}
	switch s.Transport {
	case "streamable-http":
		attrs = append(attrs, keyTransport.String("tcp"), keyProtocolName.String("http"))
	case "stdio":
		attrs = append(attrs, keyTransport.String("pipe"))
	}
	if s.ErrorType != "" {
		attrs = append(attrs, keyErrorType.String(s.ErrorType))
	}
	if p := t.principal(s.Principal); p != "" {
		attrs = append(attrs, keyPrincipal.String(p))
	}
	t.session.Record(context.WithoutCancel(ctx), s.Duration.Seconds(), metric.WithAttributes(attrs...))
}

// principal returns the value of mcpadapter.principal for p: p when
// Options.Principals lists it, "_OTHER" for another, "" for none or
// when no principal is named.
func (t *Telemetry) principal(p string) string {
	switch {
	case t.principals == nil || p == "":
		return ""
	case t.principals[p]:
		return p
	}
	return "_OTHER"
}

// extracted reports whether ctx has a trace context of its own, not the
// ambient one.
func extracted(ctx context.Context, ambient trace.SpanContext) bool {
	sc := trace.SpanContextFromContext(ctx)
	return sc.IsValid() && !sc.Equal(ambient)
}
