//lint:file-ignore SA1019 the gateway relays roots, sampling and logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options.
const (
	DefaultMaxRequestBytes    = 4 << 20
	DefaultMaxCallsPerServer  = 64
	DefaultMaxCallsPerSession = 16
	DefaultParkTimeout        = 5 * time.Minute
	DefaultShutdownGrace      = 10 * time.Second
	// DefaultMaxExtraConnections is Options.MaxExtraConnections' default.
	DefaultMaxExtraConnections = 3
	// DefaultMaxSessions is Options.MaxSessions' default. An idle
	// handshake-era session holds about 9 KiB of the gateway's heap and
	// stacks alone, and 50–75 KiB with its client's keep-alive connection
	// and standalone stream open (docs/dev/benchmarks.md, "What an idle
	// session holds"): 4096 of them hold about 35–300 MiB, which fits a
	// gateway in a 512 MiB container, and are far more than the clients
	// one gateway serves at once (each client holds one session).
	DefaultMaxSessions = 4096
	// extraIdle is how long an extra connection to a server waits idle
	// before the gateway closes it (pool.go).
	extraIdle = 30 * time.Second
	// maxInputRounds bounds the input_required rounds of one call that the
	// gateway answers for a handshake-era client.
	maxInputRounds = 10
)

// A Server is one server behind the gateway: an entry of a config file, or
// a target as mcpadapter.NewClient takes it (a URL, a Command, an
// in-process *mcp.Server).
type Server struct {
	// Name names the server in tool prefixes, errors and logs; a Config
	// entry's own name is used when Name is empty.
	Name string
	// Config is the server's config entry; nil when Target is set.
	Config *mcpadapter.ServerConfig
	// Target is what mcpadapter.NewClient connects to when Config is nil.
	Target any
	// Exchange, if set, makes the server's credential per principal: each
	// principal's requests go with a token exchanged (RFC 8693) for the
	// access token the principal presented to the gateway (see
	// credentials.go); its Resource defaults to the server's URL. A
	// Config entry's "auth" of type "token_exchange" sets it. With its
	// IDJAG set the token comes by the ID-JAG flow: an ID-JAG from the
	// identity provider (Issuer), presented at the server's authorization
	// server. The server must be an HTTP one.
	Exchange *mcpadapter.TokenExchange
	// SignIn, if set, signs each principal in to the server through the
	// gateway (signin.go): each principal's requests go with its own
	// token, and one with none is asked, with a URL-mode elicitation, to
	// sign in in its browser. It needs Options.SignIn. A Config entry's
	// "auth" of type "signin" sets it. The server must be an HTTP one.
	SignIn *SignIn
}

// FromConfig returns the servers of cfg, in the config's order. An entry
// whose "disabled" member is true is left out.
func FromConfig(cfg *mcpadapter.Config) []Server {
	var out []Server
	if cfg == nil {
		return nil
	}
	for _, sc := range cfg.Servers {
		if d, ok := sc.Extra["disabled"]; ok && string(d) == "true" {
			continue
		}
		out = append(out, Server{Name: sc.Name, Config: sc})
	}
	return out
}

// Options configures a Gateway. A nil *Options is the defaults.
type Options struct {
	// Client is the base of every server's mcpadapter.ClientOptions
	// (timeouts, limits, logger, auth templates); a config entry's own
	// settings override it. Its handlers (sampling, elicitation, roots,
	// logs, progress, messages) are the gateway's and are replaced. Its
	// Logger and Telemetry see nothing of the config's secrets: they are
	// blanked out of log lines, and of an operation's URL and error.
	Client *mcpadapter.ClientOptions

	// Prefix says when tool and prompt names start with their server's
	// name. PrefixAuto (the zero value) prefixes them when the gateway has
	// more than one server, as mcpadapter does; PrefixAlways keeps names
	// stable when servers are added. A config entry's "prefix" is always
	// used.
	Prefix mcpadapter.PrefixMode
	// Transforms shape each server's tools by server name, as
	// mcpadapter.Options.Transforms does.
	Transforms map[string]*mcpadapter.ServerTransform
	// ToolFilter, if set, keeps only the tools for which it returns true
	// (mcpadapter.Options.ToolFilter).
	ToolFilter func(server string, tool *mcpadapter.Tool) bool
	// ToolSearch, if set, shows clients the pair search_tools and
	// call_tool instead of the catalog when the catalog's definitions are
	// over ToolSearch.Threshold estimated tokens (mcpadapter.ToolSearch).
	ToolSearch *mcpadapter.ToolSearch

	// Name and Version are the gateway's implementation info; defaults
	// "mcpadapter-gateway" and mcpadapter.Version().
	Name, Version string
	// Instructions is sent to clients with the server info.
	Instructions string

	// Logger receives the gateway's own logs and the log messages of
	// servers that no client's request caused; nil means slog.Default().
	Logger *slog.Logger
	// OnEvent, if set, is told when a server comes up, goes down or has a
	// problem (a name collision, a listing that failed). It must not block.
	OnEvent func(Event)

	// CallTimeout, if positive, bounds each forwarded tool call; it starts
	// again each time the server reports the call's progress. Zero leaves
	// calls to the servers' own timeouts.
	CallTimeout time.Duration
	// MaxCallsPerServer caps the tool calls in flight to one server; more
	// wait for a slot as long as their own context allows. Zero means
	// DefaultMaxCallsPerServer, negative no cap.
	MaxCallsPerServer int
	// MaxCallsPerSession caps the tool calls in flight from one
	// handshake-era client session; one more is refused with an error.
	// Zero means DefaultMaxCallsPerSession, negative no cap.
	MaxCallsPerSession int
	// MaxSessions caps the handshake-era client sessions the gateway
	// holds at once (2026-07-28 clients hold none). A session holds its
	// place until it ends: its client's DELETE, SessionTimeout, Close.
	// A request that makes one more (an initialize) ends the session idle
	// longest to make room once it is made (a request that makes none
	// ends none), as SessionTimeout would end it
	// (its client's next request is answered 404, and a client then
	// starts a new session), logged as a warning (at Info when a principal
	// ends its own at MaxSessionsPerPrincipal); idle means no request of it
	// is being served: no POST in flight, no standalone stream (GET)
	// open, so a client that keeps its stream open is never ended. Only
	// when no session is idle is the request refused with HTTP 503 and a
	// JSON-RPC error (CodeTooManySessions) before anything is made for
	// it, and logged. With Sessions set the cap is per replica: it counts
	// the sessions this replica holds, those made here and its copies of
	// those made on other replicas; ending an idle copy ends only the
	// copy (the session's record stays, and its next request here makes
	// it again), and a copy past the cap with none idle is refused as a
	// new session is. Zero means DefaultMaxSessions, negative no cap.
	MaxSessions int
	// MaxSessionsPerPrincipal caps the sessions one principal (see
	// Policy) holds at once, so that one user holding all the sessions
	// does not lock the others out: one more ends that principal's own
	// session idle longest (never another's), or, none of its sessions
	// idle, is refused with HTTP 429 and CodeTooManySessions. Sessions
	// made without a principal are counted by MaxSessions alone. Zero means a quarter of MaxSessions
	// (at least 1; no cap when MaxSessions is negative), negative no cap.
	MaxSessionsPerPrincipal int
	// MaxRequestBytes bounds the body of one HTTP request; zero means
	// DefaultMaxRequestBytes. Responses from servers are bounded by
	// Client.MaxMessageBytes.
	MaxRequestBytes int64
	// TakeOverStreams serves the standalone stream (GET) of each
	// handshake-era session this gateway holds in its process on its
	// connection taken over from net/http (http.Hijacker, HTTP/1.x),
	// with a goroutine and buffers of the gateway's, about 27 KiB less
	// per idle client session than net/http's connection goroutine and
	// buffers (streamconn.go). Such a stream is no longer the
	// http.Server's: Server.Shutdown does not wait for it, Server.Close
	// does not close it, the server's WriteTimeout does not apply to it,
	// and a middleware around the gateway sees its request end when it is
	// taken over. What its client sends on the connection is dropped, up
	// to MaxRequestBytes: past it the stream ends. It ends with its
	// session, its client, or Gateway.Shutdown or Close, which a
	// program that sets it calls before the http.Server's Shutdown.
	// mcpadapter serve sets it. With Sessions set it does nothing.
	TakeOverStreams bool
	// slowPathOnly turns the fast path off (fastpath.go): every request
	// goes through go-sdk's streamable HTTP handlers. Tests set it to
	// compare the two.
	slowPathOnly bool
	// ParkTimeout is how long a handshake-era server's question waits for
	// the client's answer: a handshake-era client's reply to the request,
	// or a 2026-07-28 client's retry with its answers. Meanwhile that
	// connection to the server takes no call of another client that can
	// be asked (see lane.go); such calls go to another connection
	// (MaxExtraConnections), and wait only when all are taken, so this
	// also bounds how long a client that never answers holds them back.
	// Every other question the gateway puts to a handshake-era client (a
	// 2026-07-28 server's input_required round, a task's question on
	// tasks/result, a sign-in question mid-call) waits no longer either;
	// with SessionOptions, a recorded question counts no longer (plus a
	// margin) in the screen of answers (sessions_asks.go).
	// Zero means DefaultParkTimeout.
	ParkTimeout time.Duration
	// MaxExtraConnections bounds the connections the gateway opens to a
	// handshake-era server besides its shared one (pool.go): a call that
	// may not run on the shared connection beside the calls of another
	// client in flight there (lane.go) runs on an extra connection
	// instead, opened when needed, kept while used and closed after 30 s
	// idle. Past the bound such a call waits until one of them may take
	// it. For a stdio server each extra connection is another process of
	// it (stopped with the gateway). Zero means
	// DefaultMaxExtraConnections, negative none.
	MaxExtraConnections int
	// extraIdle, if set, replaces extraIdle (tests).
	extraIdle time.Duration
	// relayMessages and relayBytes, if set, replace the bounds of a
	// client session's relay (relay.go; tests).
	relayMessages, relayBytes int
	// Tasks bounds the tasks the gateway runs for its clients (tasks.go);
	// nil means the defaults.
	Tasks *TaskOptions
	// SessionTimeout closes handshake-era client sessions idle this long;
	// zero means never (with Sessions set: a replica's copy of a session
	// idle for the session's TTL is closed, and made again from its
	// record if a request of it comes back). At MaxSessions or
	// MaxSessionsPerPrincipal a new session ends the session idle
	// longest sooner.
	SessionTimeout time.Duration
	// Sessions, if set, keeps handshake-era client sessions in a store
	// shared by replicas, so that any replica serves any request of them
	// (sessions.go); nil keeps them in this process.
	Sessions *SessionOptions

	// AllowedHosts are Host header values accepted besides loopback names
	// (localhost, 127.0.0.1, [::1], with any port). A request with another
	// Host is refused: DNS rebinding.
	AllowedHosts []string
	// AllowedOrigins are browser origins (scheme://host[:port]) accepted
	// besides the gateway's own. A request with another Origin header is
	// refused.
	AllowedOrigins []string

	// The principal of a request (whom it is for) is the UserID of its
	// go-sdk auth.TokenInfo: wrap the gateway's handler in a
	// resourceserver.Guard (the gateway as an OAuth resource server: JWT,
	// introspection, DPoP, API keys), go-sdk's auth.RequireBearerToken or
	// anything that sets the same to have one. It is on the context of
	// everything done for the request (PrincipalFrom, and the whole
	// TokenInfo, scopes and claims, with TokenInfoFrom), handed to Policy,
	// and binds handshake-era sessions and parked calls to it.
	// Policy, if set, decides what each principal sees and may call.
	Policy Policy

	// Limits, if set, are rate limits and concurrency caps on tool calls
	// by principal, server and tool, shared by replicas through their
	// store (quota.go).
	Limits *Limits

	// AuditLog, if set, gets one record per tool call the gateway
	// handles, at level Info: principal, session, the tool as the client
	// named it, its server and the server's name for it, the outcome
	// ("ok", "tool_error", "input_required", "refused", "error"), the
	// JSON-RPC error's code and message, and the duration. A
	// slog.NewJSONHandler over a file makes it JSON lines. The config's
	// secrets are blanked out of every record.
	AuditLog *slog.Logger
	// AuditPayload, if set, says for which calls the record also holds
	// the arguments and the result (each cut at 64 KiB); nil: none does.
	AuditPayload func(principal, server, tool string) bool

	// Telemetry, if set, observes each client request the gateway
	// handles (notifications aside) as a mcpadapter.ServerOperation: it
	// starts with the client's trace context (the request's
	// _meta.traceparent, else the HTTP headers') and ends with the
	// answer. The requests to the servers are made with the context it
	// returns, and carry its trace context in their _meta (and not the
	// client's traceparent, tracestate or baggage), so a server's spans
	// join the client's trace through the gateway's. One that is a
	// mcpadapter.ServerSessionTelemetry is told too of the end of each
	// handshake-era client's session that began here. Set
	// Client.Telemetry too for a span of each request to a server. The
	// otel module (mcpotel.New) implements both; nil costs nothing.
	Telemetry mcpadapter.ServerTelemetry

	// SignIn, if set, are the gateway's sign-in pages, which the servers
	// with a SignIn need (signin.go, signin_http.go; SignInHandler).
	SignIn *SignInOptions

	// Roots are the roots offered to a handshake-era server that asks for
	// them outside any client's request; none means an empty list.
	Roots []*mcp.Root
}

// A Policy decides what a principal may see and use. The gateway asks it
// for every item of a listing and before every request it forwards; a
// refused item is left out of listings and refused by name.
type Policy interface {
	// Allow reports whether principal may use the item of kind ("tool",
	// "prompt", "resource", "resourceTemplate") that server knows as name.
	Allow(ctx context.Context, principal, server, kind, name string) bool
}

// EventKind says what happened to a server.
type EventKind string

// Event kinds.
const (
	ServerUp      EventKind = "up"
	ServerDown    EventKind = "down"
	ServerProblem EventKind = "problem"
	// ServerRemoved: Reload took the server out.
	ServerRemoved EventKind = "removed"
)

// An Event is something that happened to one of the gateway's servers.
type Event struct {
	Kind   EventKind
	Server string
	// Info describes the connection of a server that came up.
	Info *mcpadapter.ServerInfo
	// Err is why a server is down, or its problem.
	Err error
}

type principalKey struct{}

type tokenInfoKey struct{}

// TokenInfoFrom returns the go-sdk auth.TokenInfo of the request a context
// belongs to (its principal, scopes and claims), or nil. A Policy reads a
// principal's scopes and claims from it.
func TokenInfoFrom(ctx context.Context) *auth.TokenInfo {
	ti, _ := ctx.Value(tokenInfoKey{}).(*auth.TokenInfo)
	return ti
}

// withTokenInfo puts a request's TokenInfo and its principal on ctx.
func withTokenInfo(ctx context.Context, ti *auth.TokenInfo) context.Context {
	if ti == nil {
		return ctx
	}
	return withPrincipal(context.WithValue(ctx, tokenInfoKey{}, ti), ti.UserID)
}

// PrincipalFrom returns the principal of the request a context belongs to
// (Options.Principal), or "".
func PrincipalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

func withPrincipal(ctx context.Context, p string) context.Context {
	if p == "" {
		return ctx
	}
	return context.WithValue(ctx, principalKey{}, p)
}

func (o *Options) maxCallsPerServer() int {
	switch {
	case o.MaxCallsPerServer < 0:
		return 0
	case o.MaxCallsPerServer == 0:
		return DefaultMaxCallsPerServer
	}
	return o.MaxCallsPerServer
}

func (o *Options) maxCallsPerSession() int {
	switch {
	case o.MaxCallsPerSession < 0:
		return 0
	case o.MaxCallsPerSession == 0:
		return DefaultMaxCallsPerSession
	}
	return o.MaxCallsPerSession
}

func (o *Options) maxSessions() int {
	switch {
	case o.MaxSessions < 0:
		return 0
	case o.MaxSessions == 0:
		return DefaultMaxSessions
	}
	return o.MaxSessions
}

func (o *Options) maxSessionsPerPrincipal() int {
	switch {
	case o.MaxSessionsPerPrincipal < 0:
		return 0
	case o.MaxSessionsPerPrincipal > 0:
		return o.MaxSessionsPerPrincipal
	}
	if all := o.maxSessions(); all > 0 {
		return max(1, all/4)
	}
	return 0
}

func (o *Options) maxExtraConnections() int {
	switch {
	case o.MaxExtraConnections < 0:
		return 0
	case o.MaxExtraConnections == 0:
		return DefaultMaxExtraConnections
	}
	return o.MaxExtraConnections
}

func (o *Options) extraIdleTime() time.Duration {
	if o.extraIdle > 0 {
		return o.extraIdle
	}
	return extraIdle
}

func (o *Options) parkTimeout() time.Duration {
	if o.ParkTimeout > 0 {
		return o.ParkTimeout
	}
	return DefaultParkTimeout
}

func (o *Options) maxRequestBytes() int64 {
	if o.MaxRequestBytes > 0 {
		return o.MaxRequestBytes
	}
	return DefaultMaxRequestBytes
}
