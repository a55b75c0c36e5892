package mcpadapter

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/servername"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientOptions configures a Client. The zero value is ready to use.
//
// Handlers are passed to go-sdk untouched: they behave exactly as documented
// on mcp.ClientOptions.
type ClientOptions struct {
	// Name names the server in tool metadata, errors and logs. It defaults to
	// the URL's host, Command.Name for a command, or "in-process".
	Name string
	// NameFromServer, when Name is empty and the target is a Command,
	// names the server by what it calls itself: the serverInfo.name of
	// its answer to the handshake, sanitised as ServerNameFrom does, or
	// Command.Name when it gives none that has a letter or digit. The
	// name is settled once, by the Client's first connection (whether it
	// succeeds or not; a failed one settles Command.Name), and never
	// changes after: the server is started once, and the logs and the
	// trace of that first connection are held until the name is known.
	// Name called before the first connection settles it to
	// Command.Name; so does Adapter's New when Options.Transforms names
	// servers: connect first (Client.Connect) to key them by the
	// server's own name. In a Group, two clients that settle on the same
	// name both fail, each with an error naming both; one that settles
	// on the name another client was given fails alone. Other targets
	// ignore it.
	NameFromServer bool
	// naming is the name that NameFromServer settles, shared by the
	// clients made from one NewClient (an Adapter's interrupt clones).
	naming *servername.Pending

	// Headers are added to every HTTP request (HTTP targets only).
	Headers map[string]string
	// HTTPClient is the base HTTP client; nil means a new client using
	// http.DefaultTransport. Its Transport is wrapped, never modified.
	HTTPClient *http.Client
	// Auth authenticates HTTP requests; nil means none. See BearerToken,
	// OAuth and AuthFunc.
	Auth Auth
	// OAuthHandler runs the MCP authorization flow (go-sdk's auth package:
	// auth.NewAuthorizationCodeHandler, extauth handlers, ...). It is given
	// to go-sdk's streamable HTTP transport untouched: tokens, refresh,
	// 401/403 and scope step-up are go-sdk's. HTTP targets; on SSE, whose
	// go-sdk client has no OAuth, the adapter uses it the same way.
	OAuthHandler auth.OAuthHandler

	// ProtocolVersion, if set, is the protocol version to ask for; a
	// handshake-era version ("2025-11-25", ...) skips the server/discover
	// probe. Empty means the newest, with fallback.
	ProtocolVersion string

	// Cache turns on the response cache, which keeps listings and resource
	// reads of 2026-07-28 servers for as long as their caching hints allow;
	// nil means off. &CacheConfig{} is a ready default. See CacheConfig and
	// WithCacheMode.
	Cache *CacheConfig

	// Timeout bounds each request (tool call, listing, ...); zero means no
	// limit beyond the caller's context. A call queued by
	// MaxConcurrentCalls starts its Timeout when it is sent.
	Timeout time.Duration
	// ResetTimeoutOnProgress makes Timeout, for tool calls, restart each
	// time the server reports the call's progress (as the TypeScript
	// SDK's resetTimeoutOnProgress): a long call that keeps reporting
	// runs on, one that goes silent for Timeout ends with a
	// *TimeoutError of kind TimeoutNoProgress. MaxTotalTimeout still
	// bounds it. A progress token is then sent with every call.
	ResetTimeoutOnProgress bool
	// MaxTotalTimeout, if positive, bounds each tool call overall,
	// however often its server reports progress (*TimeoutError of kind
	// TimeoutTotal). Zero means no bound beyond Timeout.
	MaxTotalTimeout time.Duration
	// MaxConcurrentCalls, if positive, caps the tool calls in flight to
	// this server at once (a single-threaded stdio server, a server with
	// one upstream connection); more calls wait for a free slot, each for
	// as long as its own context allows. Zero means no cap. It counts
	// tools/call requests only (listings, reads and prompts are not held
	// back), and each Client has its own cap.
	MaxConcurrentCalls int
	// Tasks configures tool calls that run as MCP tasks (see TaskMode);
	// nil: TaskAuto, with the default poll bounds.
	Tasks *TaskOptions
	// ConnectTimeout bounds starting the server and the protocol handshake;
	// zero means 30 seconds.
	ConnectTimeout time.Duration
	// ProbeTimeout bounds the wait for an answer to server/discover before
	// falling back to the initialize handshake (some older servers never
	// answer it); zero means 5 seconds. A stdio or in-process server is
	// then connected to anew (a new process), since one that took the
	// probe late refuses initialize on the same session.
	ProbeTimeout time.Duration
	// MaxSessions bounds the connections an HTTP server gets when calls
	// are made for several principals (CallIdentity): each principal,
	// with its identity headers, has its own connection, made with its
	// credentials, so the server's session (and everything it keeps per
	// session) is that principal's alone. When the bound is reached, the
	// connection unused longest with no request in flight is closed; if
	// every one is busy, the new principal's request fails with a
	// *TransportError. Zero means DefaultMaxSessions. A stdio or
	// in-process server has one connection whatever the principals.
	MaxSessions int
	// SessionIdleTimeout closes a principal's connection unused for this
	// long (found when a request needs a connection); zero means
	// DefaultSessionIdleTimeout, negative never.
	SessionIdleTimeout time.Duration

	// LogHandler receives the server's log notifications (notifications/message).
	LogHandler func(context.Context, *mcp.LoggingMessageRequest)
	// ProgressHandler receives every progress notification. Calls get their
	// own progress token, so a handler given to one call with OnProgress
	// only sees that call's progress.
	ProgressHandler func(context.Context, *mcp.ProgressNotificationClientRequest)
	// MessageHandler sees every request and notification the server sends,
	// before the handler for it runs.
	MessageHandler func(ctx context.Context, method string, req mcp.Request)
	// ToolListChangedHandler receives notifications/tools/list_changed.
	// Setting it also subscribes to the server's tool-list changes, as
	// WatchTools does.
	ToolListChangedHandler func(context.Context, *mcp.ToolListChangedRequest)
	// WatchTools subscribes to the server's tool-list changes: the
	// handshake era's notifications/tools/list_changed, and on 2026-07-28
	// servers that announce tools.listChanged, a subscriptions/listen
	// stream that go-sdk keeps open (one long-lived request; over HTTP, one
	// more connection). An Adapter then re-lists the server's tools when
	// they change; see Options.WatchTools and "Live tool lists" in
	// docs/tool-search.md.
	WatchTools bool
	// PromptListChangedHandler receives notifications/prompts/list_changed;
	// ResourceListChangedHandler receives notifications/resources/list_changed.
	// Setting one also subscribes to those changes: on 2026-07-28 servers
	// that announce them, go-sdk then asks for them on its
	// subscriptions/listen stream.
	PromptListChangedHandler   func(context.Context, *mcp.PromptListChangedRequest)
	ResourceListChangedHandler func(context.Context, *mcp.ResourceListChangedRequest)
	// Roots are the roots offered to the server; none means the roots
	// capability is not advertised.
	//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
	Roots []*mcp.Root
	// SamplingHandler answers sampling/createMessage requests; nil means the
	// sampling capability is not advertised.
	//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
	SamplingHandler func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	// ElicitationHandler answers elicitation/create requests, and the
	// elicitations of a 2026-07-28 call's rounds and of its task; nil means
	// the elicitation capability is not advertised, so servers decline
	// instead of asking. A URL question reaches it only for a web page
	// (http or https; another is declined, or in a round or a task
	// answered with an error), and an accepted form's content must fit
	// the requested schema (its defaults are filled in), else the question
	// is answered with an error.
	ElicitationHandler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// RootsHandler answers roots/list requests, instead of Roots; setting
	// it advertises the roots capability (with listChanged). A program
	// that relays the server to another client (a gateway) answers with
	// that client's roots.
	//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
	RootsHandler func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error)
	// Relay marks a client that relays the server to another client (a
	// gateway): requests made through Session (tools/call, prompts/get,
	// resources/read) return a 2026-07-28 server's input_required results
	// as the server sent them (the client's multi-round-trip loop, which
	// otherwise answers them with the handlers above and retries, is off),
	// and elicitation/create reaches ElicitationHandler as received:
	// go-sdk's checks of the requested schema and of the answer are left
	// to the client at the end of the relay.
	Relay bool

	// Telemetry, if set, observes each connect, listing and tool call and
	// adds the trace context to each tool call's _meta (see Telemetry
	// and the otel module); nil costs nothing.
	Telemetry Telemetry

	// Logger receives the client's own logs (reconnects, stray stdout lines,
	// the protocol trace); nil means slog.Default().
	Logger *slog.Logger
	// Trace logs every JSON-RPC message at debug level on Logger, with
	// tokens, passwords and Authorization values redacted.
	Trace bool

	// StderrLines is how many of a stdio server's last stderr lines are kept
	// for errors; zero means 50.
	StderrLines int
	// StderrHandler, if set, sees each line a stdio server writes to stderr.
	StderrHandler func(server, line string)
	// MaxMessageBytes bounds one message from a server, over any
	// transport: a stdio line, an HTTP response body, a server-sent event;
	// zero means DefaultMaxMessageBytes. A larger response fails its call
	// with a clear error (a tool call gets an error result saying the
	// result was too large); the connection stays usable.
	MaxMessageBytes int
	// MaxListItems bounds the items of one listing (all the pages of a
	// tools/list, prompts/list, resources/list or
	// resources/templates/list); zero means DefaultMaxListItems, a
	// negative value no bound. A longer listing fails with a
	// *ListLimitError, as does one whose server hands out a cursor twice.
	MaxListItems int
	// MaxListBytes bounds the size of one listing, counted as the JSON of
	// its items and cursors; zero means DefaultMaxListBytes, a negative
	// value no bound.
	MaxListBytes int
	// StopTimeout is how long a stdio server gets to exit after its stdin is
	// closed, and again after SIGTERM, before its process group is killed;
	// zero means 2 seconds.
	StopTimeout time.Duration
	// DisableFastPath sends every tool call through go-sdk's request
	// machinery. By default a plain tool call over stdio or streamable
	// HTTP (no progress handler or token, no cache, no ElicitInterrupt) is
	// written and answered by the adapter on the connection it owns (over
	// HTTP, POSTed through the session's HTTP client), at a fraction of the
	// CPU and garbage (docs/dev/benchmarks.md); it behaves the same.
	DisableFastPath bool

	// timeoutFrom and maxTotalFrom name where Timeout and MaxTotalTimeout
	// were set when not by the caller's ClientOptions (a config entry),
	// for the *TimeoutError of a call they end.
	timeoutFrom, maxTotalFrom string
}

// timeoutSetting returns where Timeout was set.
func (o *ClientOptions) timeoutSetting() string {
	if o.timeoutFrom != "" {
		return o.timeoutFrom
	}
	return "ClientOptions.Timeout"
}

// maxTotalSetting returns where MaxTotalTimeout was set.
func (o *ClientOptions) maxTotalSetting() string {
	if o.maxTotalFrom != "" {
		return o.maxTotalFrom
	}
	return "ClientOptions.MaxTotalTimeout"
}

// DefaultMaxMessageBytes is the default limit on one message from a
// server (ClientOptions.MaxMessageBytes).
const DefaultMaxMessageBytes = stdio.DefaultMaxMessageBytes

// The defaults of ClientOptions.MaxSessions and SessionIdleTimeout.
const (
	DefaultMaxSessions        = 256
	DefaultSessionIdleTimeout = 10 * time.Minute
)

func (o *ClientOptions) maxSessions() int {
	if o.MaxSessions > 0 {
		return o.MaxSessions
	}
	return DefaultMaxSessions
}

func (o *ClientOptions) sessionIdleTimeout() time.Duration {
	switch {
	case o.SessionIdleTimeout > 0:
		return o.SessionIdleTimeout
	case o.SessionIdleTimeout < 0:
		return 0
	}
	return DefaultSessionIdleTimeout
}

func (o *ClientOptions) connectTimeout() time.Duration {
	if o.ConnectTimeout > 0 {
		return o.ConnectTimeout
	}
	return 30 * time.Second
}

func (o *ClientOptions) probeTimeout() time.Duration {
	if o.ProbeTimeout > 0 {
		return o.ProbeTimeout
	}
	return 5 * time.Second
}

func (o *ClientOptions) maxMessageBytes() int {
	if o.MaxMessageBytes > 0 {
		return o.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

func (o *ClientOptions) closeGrace() time.Duration {
	if o.StopTimeout > 0 {
		return o.StopTimeout
	}
	return 2 * time.Second
}

func (o *ClientOptions) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}
