package telemetry

import (
	"context"
	"net/http"
	"time"
)

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
	// made with ctx to a server behind, as mcpadapter.Telemetry.InjectMeta does. The
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
	// ErrorType is mcpadapter.ErrorType(Err), or "tool_error" for a tool error: ""
	// when the request succeeded.
	ErrorType string
	// Code is the JSON-RPC error code the client is answered with, or 0:
	// any value, for a server behind chooses it (ErrorType has it only
	// when JSON-RPC reserves it).
	Code int64
}
