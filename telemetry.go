package mcpadapter

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
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
	op := Operation{Method: method, Server: c.opServer(ctx, method), Tool: tool, Transport: string(c.ep.kind)}
	if c.ep.kind == kindStreamable || c.ep.kind == kindSSE {
		op.URL = c.ep.url
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
	if c.opts.Telemetry == nil {
		return c.callTool(ctx, tc)
	}
	ctx, end := c.startOp(ctx, "tools/call", tc.tool)
	meta := make(map[string]any, len(tc.meta)+2)
	maps.Copy(meta, tc.meta)
	c.opts.Telemetry.InjectMeta(ctx, meta)
	if len(meta) > 0 {
		tc.meta = meta
	}
	res, err := c.callTool(ctx, tc)
	end(c.opResult(ctx, res != nil && res.IsError, err))
	return res, err
}

// ServerTelemetry observes the work of an MCP server built on this module,
// such as the gateway (github.com/mcpadapter/mcpadapter/gateway,
// Options.Telemetry): each request a client makes of it is a
// ServerOperation that starts, continuing the client's trace, and ends.
// The otel module implements it with OpenTelemetry server spans and
// metrics; this module does not depend on OpenTelemetry.
//
// Implementations must be safe for concurrent use and should not block.
type ServerTelemetry interface {
	// StartServerOperation is called when a client's request begins. The
	// context it returns is the operation's (a server span's, say, whose
	// parent is the trace context op carries): everything done for the
	// request, the requests to the servers behind it included, is done
	// with it. end is called once, when the request has its answer.
	StartServerOperation(ctx context.Context, op ServerOperation) (_ context.Context, end func(ServerOperationResult))
	// InjectMeta adds the trace context of ctx to the _meta of a request
	// made with ctx to a server behind, as Telemetry.InjectMeta does. The
	// gateway leaves the client's own "traceparent", "tracestate" and
	// "baggage" out of that _meta: the trace context a server gets is
	// what InjectMeta writes.
	InjectMeta(ctx context.Context, meta map[string]any)
}

// ServerOperation is one request of a client that ServerTelemetry sees.
// Its names have few values: Tool and Prompt are names the server offers
// (a name a client made up is left out), so that a client cannot make new
// values of them.
type ServerOperation struct {
	// Method is the MCP method: "tools/call", "tools/list",
	// "prompts/get", "resources/read", "tasks/get", "initialize", ...;
	// or "tasks/run" for the run of a task the server makes for a
	// tools/call, after that request has its answer. A "tasks/run"'s Meta
	// holds the trace context of the tools/call that made the task.
	Method string
	// Server names the server behind that answers the request (the
	// gateway's name for it), when there is one and it is known.
	Server string
	// Tool is the tool called, by the name the client sees (tools/call).
	Tool string
	// Prompt is the prompt asked for, by the name the client sees
	// (prompts/get).
	Prompt string
	// ResourceURI is the resource read or subscribed to, cut at 1 KiB.
	// It is the client's, and has as many values as clients make.
	ResourceURI string
	// SessionID is the client's MCP session id, if it has one.
	SessionID string
	// ProtocolVersion is the protocol version of the client's request,
	// when it is one the server knows.
	ProtocolVersion string
	// Transport is "streamable-http" or "stdio".
	Transport string
	// Principal is whom the request is for (the gateway's principal), or
	// "". It has as many values as there are users.
	Principal string
	// Meta is the _meta of the client's request, where its trace context
	// is ("traceparent", "tracestate"); read it, never change it. Its
	// values are the client's: of any type and size.
	Meta map[string]any
	// Header is the HTTP request's header (nil over stdio), whose trace
	// context serves when Meta has none; read it, never change it.
	Header http.Header
	// HTTPContext is the context of the HTTP request that carried the
	// request (nil over stdio): the values the program's HTTP server put
	// there, such as the span of its own instrumentation, are in it. The
	// context StartServerOperation is given may not have them: go-sdk
	// handles the requests of a handshake-era session in the context of
	// the HTTP request that opened the session.
	HTTPContext context.Context
	// RequestID is the JSON-RPC id of the client's request as text (a
	// number's digits, a string's characters, cut at 1 KiB), or "" when
	// it is not known. It is the client's: as many values as requests.
	RequestID string
	// RemoteAddr is the network address of the peer that sent the HTTP
	// request ("IP:port", http.Request.RemoteAddr), or "" over stdio:
	// the client, or a proxy in front of the server.
	RemoteAddr string
}

// ServerSessionTelemetry is a ServerTelemetry that also observes the
// sessions of handshake-era clients (protocol versions before
// 2026-07-28, which begin with initialize): the gateway calls
// EndServerSession once for each session it began, when the session ends.
// A 2026-07-28 client has no session.
type ServerSessionTelemetry interface {
	ServerTelemetry
	// EndServerSession is called when a session ends (the client ended
	// it, it was idle for too long, its connection broke, the server
	// closed). It should not block.
	EndServerSession(ctx context.Context, s ServerSessionEnd)
}

// ServerSessionEnd describes a client's session that ended.
type ServerSessionEnd struct {
	// SessionID is the session's id ("" over stdio).
	SessionID string
	// Duration is how long the session lasted, from its initialize
	// request to its end.
	Duration time.Duration
	// ProtocolVersion is the protocol version the session spoke.
	ProtocolVersion string
	// Transport is "streamable-http" or "stdio".
	Transport string
	// Principal is whom the session was for, or "".
	Principal string
	// Err is why the session ended when it ended with an error (its
	// connection broke: a message that is not JSON-RPC, a write that
	// failed), else nil; ErrorType is then "transport".
	Err       error
	ErrorType string
}

// ServerOperationResult says how a ServerOperation ended.
type ServerOperationResult struct {
	// Err is the error the client is answered with, or nil.
	Err error
	// ToolError reports a tool call that ran and failed (its result's
	// isError).
	ToolError bool
	// ErrorType is ErrorType(Err), or "tool_error" for a tool error: ""
	// when the request succeeded.
	ErrorType string
	// Code is the JSON-RPC error code the client is answered with, or 0:
	// any value, for a server behind chooses it (ErrorType has it only
	// when JSON-RPC reserves it).
	Code int64
}

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
