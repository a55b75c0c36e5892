package mcpadapter

import (
	"context"
	"errors"
	"maps"
	"strconv"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/telemetry"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Telemetry observes a Client's work: each connect, listing and tool call
// is an Operation that starts and ends, and each tools/call can carry the
// caller's trace context to the server in its _meta. Set it with
// ClientOptions.Telemetry; nil (the default) costs nothing. The otel
// module (github.com/mcpadapter/mcpadapter/otel) implements it with
// OpenTelemetry spans and metrics, following the semantic conventions for
// MCP; this module does not depend on OpenTelemetry.
//
// Implementations must be safe for concurrent use and should not block.
type Telemetry interface {
	// StartOperation is called when op begins. The context it returns is
	// the operation's (a span's, say): the request is made with it. end
	// is called once, when the operation ends.
	StartOperation(ctx context.Context, op Operation) (_ context.Context, end func(OperationResult))
	// InjectMeta adds entries to the _meta of a request made with ctx,
	// such as the W3C trace context ("traceparent", "tracestate"). meta
	// is the request's own copy, never nil; entries the caller set
	// (CallOptions.Meta, CallIdentity.Meta) are already in it, and what
	// InjectMeta writes wins.
	InjectMeta(ctx context.Context, meta map[string]any)
}

// Operation is one piece of a Client's work that Telemetry sees.
type Operation struct {
	// Method is the MCP method: "tools/call", "tools/list",
	// "prompts/list", "resources/list", "resources/templates/list", or
	// "connect" for making a connection (process start, handshake).
	Method string
	// Server names the server (ClientOptions.Name, the config key). It
	// is empty for the connect that settles a name the server gives
	// itself (ClientOptions.NameFromServer): the name is not known when
	// that connect starts.
	Server string
	// Tool is the server's name of the tool called (tools/call only).
	Tool string
	// Transport is "stdio", "streamable-http", "sse" or "in-process".
	Transport string
	// URL is an HTTP server's URL, "" for the other transports.
	URL string
}

// OperationResult says how an Operation ended.
type OperationResult struct {
	// Err is the Go error the operation returned, or nil.
	Err error
	// ToolError reports a tool call that ran and failed (Result.IsError).
	ToolError bool
	// ErrorType is ErrorType(Err), or "tool_error" for a tool error: ""
	// when the operation succeeded.
	ErrorType string
	// SessionID is the connection's MCP session id, if it has one.
	SessionID string
	// ProtocolVersion is the connection's protocol version, once known.
	ProtocolVersion string
}

// ErrorType names the kind of err for metrics and traces, in few values:
// "" for nil; a JSON-RPC error's code ("-32602") when JSON-RPC reserves
// it (-32768 to -32000: the codes of JSON-RPC, MCP and the gateway), else
// "_OTHER" (a server chooses the code, from as many values as it likes);
// "timeout" (a
// *TimeoutError or a deadline); "canceled"; "identity" (*IdentityError);
// "auth" (*PrincipalAuthError, *AuthorizationError,
// *SignInRequiredError); "content" (*ContentError); "list_limit"
// (*ListLimitError); "input_required" (*InputRequiredError);
// "process_exit" (*ProcessExitError); "transport" (any other
// *TransportError); else "_OTHER".
func ErrorType(err error) string {
	if err == nil {
		return "" // before the variables below, which errors.As makes escape
	}
	var (
		rpc      *jsonrpc.Error
		timeout  *TimeoutError
		identity *IdentityError
		pauth    *PrincipalAuthError
		authz    *AuthorizationError
		signin   *SignInRequiredError
		content  *ContentError
		limit    *ListLimitError
		input    *InputRequiredError
		exit     *ProcessExitError
		te       *TransportError
	)
	switch {
	case errors.As(err, &identity):
		return "identity"
	case errors.As(err, &pauth), errors.As(err, &authz), errors.As(err, &signin):
		return "auth"
	case errors.As(err, &timeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &content):
		return "content"
	case errors.As(err, &limit):
		return "list_limit"
	case errors.As(err, &input):
		return "input_required"
	case errors.As(err, &exit):
		return "process_exit"
	case sdkerr.IsServerError(err) && errors.As(err, &rpc):
		return codeType(rpc.Code)
	case errors.As(err, &te):
		return "transport"
	}
	return "_OTHER"
}

// codeType is the ErrorType of a JSON-RPC error's code: the code when
// JSON-RPC reserves it, else "_OTHER".
func codeType(code int64) string {
	if code < -32768 || code > -32000 {
		return "_OTHER"
	}
	return strconv.FormatInt(code, 10)
}

// noEnd is the end of an operation nobody observes.
func noEnd(OperationResult) {}

// startOp starts the operation method (on tool, for tools/call) when
// ClientOptions.Telemetry is set.
func (c *Client) startOp(ctx context.Context, method, tool string) (context.Context, func(OperationResult)) {
	t := c.opts.Telemetry
	if t == nil {
		return ctx, noEnd
	}
	op := Operation{Method: method, Server: c.opServer(ctx, method), Tool: tool, Transport: string(c.ep.Kind)}
	if c.ep.HTTP() {
		op.URL = c.ep.URL
	}
	return t.StartOperation(ctx, op)
}

// opResult describes how an operation ended: with err, or for a tool
// call with a result whose isError is toolError.
func (c *Client) opResult(ctx context.Context, toolError bool, err error) OperationResult {
	r := OperationResult{Err: err, ErrorType: ErrorType(err)}
	if err == nil && toolError {
		r.ToolError, r.ErrorType = true, "tool_error"
	}
	if s := c.eng.Current(ctx); s != nil {
		r.SessionID, r.ProtocolVersion = s.ID(), s.ProtocolVersion()
	}
	return r
}

// observedCall makes the tool call tc as an Operation of
// ClientOptions.Telemetry, with the trace context in its _meta.
func (c *Client) observedCall(ctx context.Context, tc *toolCall) (*Result, error) {
	return observed(ctx, c, tc.tool, &tc.meta, func(ctx context.Context) (*Result, error) { return c.callTool(ctx, tc) },
		func(r *Result) bool { return r != nil && r.IsError })
}

// observed runs call, a tools/call of tool whose _meta is *meta, as an
// Operation of ClientOptions.Telemetry: the trace context goes in a copy
// of *meta, and isError tells a tool error.
func observed[R any, M ~map[string]any](ctx context.Context, c *Client, tool string, meta *M, call func(context.Context) (R, error), isError func(R) bool) (R, error) {
	if c.opts.Telemetry == nil {
		return call(ctx)
	}
	ctx, end := c.startOp(ctx, "tools/call", tool)
	m := make(M, len(*meta)+2)
	maps.Copy(m, *meta)
	c.opts.Telemetry.InjectMeta(ctx, map[string]any(m))
	if len(m) > 0 {
		*meta = m
	}
	res, err := call(ctx)
	end(c.opResult(ctx, err == nil && isError(res), err))
	return res, err
}

// ServerTelemetry observes the work of an MCP server built on this module,
// such as the gateway (github.com/mcpadapter/mcpadapter/gateway,
// Options.Telemetry): each request a client makes of it is a
// ServerOperation that starts, continuing the client's trace, and ends.
// The otel module implements it with OpenTelemetry server spans and
// metrics; this module does not depend on OpenTelemetry. Its methods:
//
//   - StartServerOperation(ctx context.Context, op ServerOperation)
//     (_ context.Context, end func(ServerOperationResult)) is called when
//     a client's request begins. The context it returns is the
//     operation's (a server span's, say, whose parent is the trace context
//     op carries): everything done for the request, the requests to the
//     servers behind it included, is done with it. end is called once,
//     when the request has its answer.
//   - InjectMeta(ctx context.Context, meta map[string]any) adds the trace
//     context of ctx to the _meta of a request made with ctx to a server
//     behind, as Telemetry.InjectMeta does. The gateway leaves the
//     client's own "traceparent", "tracestate" and "baggage" out of that
//     _meta: the trace context a server gets is what InjectMeta writes.
//
// Implementations must be safe for concurrent use and should not block.
type ServerTelemetry = telemetry.ServerTelemetry

// ServerOperation is one request of a client that ServerTelemetry sees.
// Its fields: Method (the MCP method, or "tasks/run" for the run of a
// task made for a tools/call, whose Meta holds that call's trace
// context), Server (the server behind that answers), Tool and Prompt
// (names the server offers, by the name the client sees), ResourceURI
// (cut at 1 KiB), SessionID, ProtocolVersion, Transport
// ("streamable-http" or "stdio"), Principal, Meta (the request's _meta,
// where its trace context is), Header (the HTTP request's, whose trace
// context serves when Meta has none), HTTPContext (the HTTP request's
// context, with the values the program's HTTP server put there, which
// the operation's context may not have), RequestID (the JSON-RPC id as
// text) and RemoteAddr; Meta and Header are read only, and Header and
// HTTPContext are nil over stdio. Tool and Prompt have few values;
// ResourceURI, Principal, RequestID and Meta have as many as clients
// make.
type ServerOperation = telemetry.ServerOperation

// ServerSessionTelemetry is a ServerTelemetry that also observes the
// sessions of handshake-era clients (protocol versions before 2026-07-28,
// which begin with initialize): the gateway calls its
// EndServerSession(ctx context.Context, s ServerSessionEnd) once for each
// session it began, when the session ends. A 2026-07-28 client has no
// session.
type ServerSessionTelemetry = telemetry.ServerSessionTelemetry

// ServerSessionEnd describes a client's session that ended. Its fields:
// SessionID, Duration (from its initialize request to its end),
// ProtocolVersion, Transport, Principal, and Err and ErrorType
// ("transport") when its connection broke.
type ServerSessionEnd = telemetry.ServerSessionEnd

// ServerOperationResult says how a ServerOperation ended. Its fields: Err,
// the error the client is answered with, or nil; ToolError, a tool call
// that ran and failed; ErrorType, ErrorType(Err) or "tool_error"; Code,
// the JSON-RPC error code the client is answered with, or 0. Make it with
// NewServerOperationResult.
type ServerOperationResult = telemetry.ServerOperationResult

// NewServerOperationResult describes a request answered with err, or with
// a tool call's result whose isError is toolError.
func NewServerOperationResult(err error, toolError bool) ServerOperationResult {
	if err == nil {
		if toolError {
			return ServerOperationResult{ToolError: true, ErrorType: "tool_error"}
		}
		return ServerOperationResult{}
	}
	r := ServerOperationResult{Err: err, ErrorType: ErrorType(err)}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		r.Code = rpc.Code
		if r.ErrorType == "_OTHER" {
			r.ErrorType = codeType(rpc.Code)
		}
	}
	return r
}
