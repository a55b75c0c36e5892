package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/buildinfo"
	"github.com/mcpadapter/mcpadapter/internal/cache"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/servername"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Client is a connection to one MCP server that re-establishes itself.
//
// It connects on first use. When the connection is lost (the server process
// died, the HTTP session expired, Close was called) the next request
// connects again, and a request that failed before the server could have
// seen it is retried once. A Client is safe for use by many goroutines:
// their requests share one connection and run concurrently. Over HTTP,
// each principal (CallIdentity) has a connection of its own, made with its
// credentials (ClientOptions.MaxSessions; see docs/multi-user.md).
type Client struct {
	// name is the server's name. With ClientOptions.NameFromServer it is
	// written once, under nameMu, when the first connection settles it
	// (onDial) or a reader needs it first (nameNow); named says it is.
	name   string
	nameMu sync.Mutex
	named  bool
	ep     *engine.Endpoint
	opts   ClientOptions
	sdk    *mcp.Client
	obs    *wire.Observer
	log    *slog.Logger
	eng    *engine.Engine // the connection: connect, send, reconnect

	oauthFlow *oauthflow.Bound     // set when ClientOptions.Auth is an *OAuth or a grant (auth_grants.go)
	webAuth   *oauthflow.WebTarget // set when ClientOptions.Auth is a *WebSignIn
	interrupt *interruptState      // set in ElicitInterrupt mode
	// callTool makes a tool call: callDirect, or callInterruptible in
	// ElicitInterrupt mode. It is chosen when the client is built.
	callTool func(context.Context, *toolCall) (*Result, error)

	progress *engine.Router // routes progress notifications to their calls

	cache *cache.Cache // nil when ClientOptions.Cache is

	// shape is the tool transform of the client's config entry, or nil.
	shape *serverShape

	// toolsGen counts the tool-list changes the server announced
	// (live.go); zero when ClientOptions.WatchTools is off.
	toolsGen atomic.Uint64

	// bg runs the work that outlives a call: the wait for a task made as
	// the call's context ended (task_call.go).
	bg background

	// slots bounds the tool calls in flight to
	// ClientOptions.MaxConcurrentCalls; nil means no cap.
	slots engine.Slots
}

// NewClient returns a Client for target, which may be an http(s) URL
// (string or *url.URL), a Command, an *mcp.Server run in-process, or a
// *Config with a single server (whose entry's settings override opts).
// opts may be nil; NewClient keeps a copy. It does not connect; the first
// request does, or Connect.
func NewClient(target any, options *ClientOptions) (*Client, error) {
	var opts ClientOptions
	if options != nil {
		opts = *options
	}
	if err := opts.Cache.validate(); err != nil {
		return nil, fmt.Errorf("ClientOptions.Cache: %w", err)
	}
	if opts.Timeout < 0 || opts.MaxTotalTimeout < 0 {
		return nil, fmt.Errorf("ClientOptions: Timeout (%v) and MaxTotalTimeout (%v) must not be negative", opts.Timeout, opts.MaxTotalTimeout)
	}
	if opts.MaxSessions < 0 {
		return nil, fmt.Errorf("ClientOptions.MaxSessions is %d: want 0 (DefaultMaxSessions) or more", opts.MaxSessions)
	}
	if opts.MaxConcurrentCalls < 0 {
		return nil, fmt.Errorf("ClientOptions.MaxConcurrentCalls is %d: want 0 (no cap) or more", opts.MaxConcurrentCalls)
	}
	if cfg, ok := target.(*Config); ok && cfg != nil {
		if len(cfg.Servers) != 1 {
			return nil, &TargetError{Target: "config", Reason: fmt.Sprintf("it has %d servers; a Client talks to one: use NewGroup(cfg, opts) or New(cfg, nil)", len(cfg.Servers))}
		}
		return clientForServer(cfg.Servers[0], opts)
	}
	ep, err := resolveEndpoint(target)
	if err != nil {
		return nil, err
	}
	if o, ok := opts.Auth.(*OAuth); ok {
		if o == nil {
			return nil, errors.New("ClientOptions.Auth is a nil *OAuth")
		}
		if opts.OAuthHandler != nil {
			return nil, errors.New("ClientOptions: give Auth: &OAuth{...} or OAuthHandler, not both")
		}
		if err := o.check(); err != nil {
			return nil, fmt.Errorf("ClientOptions.Auth: %w", err)
		}
	}
	if w, ok := opts.Auth.(*WebSignIn); ok && (w == nil || w.flow == nil || opts.OAuthHandler != nil) {
		return nil, errors.New("ClientOptions.Auth: give a *WebSignIn made by NewWebSignIn, and no OAuthHandler")
	}
	if g, ok := opts.Auth.(grantAuth); ok {
		if opts.OAuthHandler != nil {
			return nil, errors.New("ClientOptions: give Auth or OAuthHandler, not both")
		}
		if err := g.check(); err != nil {
			return nil, fmt.Errorf("ClientOptions.Auth: %w", err)
		}
	}
	if (opts.Headers != nil || opts.Auth != nil || opts.HTTPClient != nil || opts.OAuthHandler != nil) && (ep.Local()) {
		return nil, &TargetError{Target: defaultName(ep), Reason: "Headers, Auth, OAuthHandler and HTTPClient apply to HTTP targets only"}
	}
	opts.naming = nil
	if opts.NameFromServer && opts.Name == "" && ep.Kind == engine.Stdio {
		opts.naming = servername.NewPending(defaultName(ep))
	}
	return newClient(ep, opts), nil
}

func newClient(ep *engine.Endpoint, opts ClientOptions) *Client {
	return newClientWith(ep, opts, nil)
}

// newClientWith is newClient with a last word on the go-sdk options.
func newClientWith(ep *engine.Endpoint, opts ClientOptions, adjust func(*mcp.ClientOptions)) *Client {
	name := opts.Name
	if name == "" {
		name = defaultName(ep)
	}
	c := &Client{
		ep:       ep,
		opts:     opts,
		progress: engine.NewRouter(opts.ProgressHandler),
	}
	var trace *slog.Logger
	if opts.naming != nil {
		// The name is not known yet: the records wait for it.
		name = ""
		c.log = slog.New(wire.RedactErrors(opts.naming.Handler(opts.logger().Handler())))
		if opts.Trace {
			trace = c.log
		}
	} else {
		c.name = name
		c.log = slog.New(wire.RedactErrors(opts.logger().Handler())).With("server", name)
		if opts.Trace {
			trace = opts.logger()
		}
	}
	c.callTool = c.callDirect
	c.slots = engine.NewSlots(opts.MaxConcurrentCalls)
	c.obs = wire.NewObserver(name, trace)
	if o, ok := opts.Auth.(*OAuth); ok && o != nil && ep.HTTP() {
		c.oauthFlow = newOAuthHandler(o, name, ep.URL, c.opts.HTTPClient, c.log)
	}
	if g, ok := opts.Auth.(grantAuth); ok && ep.HTTP() {
		c.oauthFlow = newGrantHandler(g, name, ep.URL, c.opts.HTTPClient, c.log)
	}
	if w, ok := opts.Auth.(*WebSignIn); ok && w != nil && w.flow != nil && ep.HTTP() {
		c.webAuth = w.target(name, ep.URL)
	}
	c.cache = c.newResponseCache(ep, &opts)
	so := c.sdkOptions()
	declareTasks(&opts, so)
	if adjust != nil {
		adjust(so)
	}
	// The rounds of a 2026-07-28 call are answered by the client's own
	// loop (inputwire.AutoRounds) where go-sdk's would answer them: go-sdk's
	// also takes a task's questions for a round and runs the tool again.
	autoRounds := so.MultiRoundTrip == nil || !so.MultiRoundTrip.Disabled
	so.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	c.sdk = mcp.NewClient(&mcp.Implementation{Name: "mcpadapter", Version: Version()}, so)
	// Innermost: a request go-sdk got the answer of is one whose notice
	// closing its session does not wait for (a round the context's end
	// cut short while its question was being asked).
	c.sdk.AddSendingMiddleware(wire.SettleMiddleware)
	// A panic while go-sdk sends a request or decodes its answer (a
	// hostile server's) fails that request: added next, so inside all
	// the others.
	c.sdk.AddSendingMiddleware(engine.RecoverSendingMiddleware(c.log))
	// resources/read, prompts/get and completion/complete return after
	// the notifications read before their answer have been handled, also
	// when made on the session Client.Session returns, and when go-sdk
	// failed decoding the answer (outside RecoverSendingMiddleware); so
	// does a tools/call made on that session (the Client's own wait in
	// engine.Session.CallTool). Each round of a 2026-07-28 request
	// (inside AutoRounds) is one request.
	c.sdk.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return c.eng.Settle(ctx, method, req, next)
		}
	})
	if autoRounds {
		c.sdk.AddSendingMiddleware(inputwire.AutoRounds{Elicit: so.ElicitationHandler, Sampling: opts.SamplingHandler, Roots: opts.Roots, Log: c.log}.Middleware)
	}
	c.sdk.AddSendingMiddleware(engine.HandshakeMiddleware(engine.Handshake{
		Probe:      opts.probeTimeout(),
		OneSession: ep.Local(),
		Keep:       ownAuthError,
		Log:        c.log,
	}))
	c.sdk.AddSendingMiddleware(c.cache.Middleware)
	c.addTaskMethods() // tasks/*, and the "task" member of tools/call: last, innermost
	c.addSkillMethods()
	if opts.MessageHandler != nil {
		c.sdk.AddReceivingMiddleware(engine.MessageMiddleware(opts.MessageHandler))
	}
	if elicit := opts.ElicitationHandler; opts.RootsHandler != nil || opts.Relay && elicit != nil {
		if !opts.Relay {
			elicit = nil
		}
		c.sdk.AddReceivingMiddleware(engine.RelayMiddleware(opts.RootsHandler, elicit))
	}
	// A panic while handling a server's request (in go-sdk's decoding or
	// a handler) answers that request with an error.
	c.sdk.AddReceivingMiddleware(engine.RecoverMiddleware(c.log))
	// Added last, so outermost: it sees a message before MessageHandler.
	c.sdk.AddReceivingMiddleware(engine.BacklogMiddleware)
	if len(opts.Roots) > 0 {
		//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
		c.sdk.AddRoots(opts.Roots...)
	}
	c.eng = engine.New(c.engineConfig())
	return c
}

func (c *Client) sdkOptions() *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
		LoggingMessageHandler:       c.opts.LogHandler,
		ProgressNotificationHandler: c.progress.Route,
		ToolListChangedHandler:      c.toolListChangedHandler(),
		PromptListChangedHandler:    c.opts.PromptListChangedHandler,
		ResourceListChangedHandler:  c.opts.ResourceListChangedHandler,
		Capabilities:                &mcp.ClientCapabilities{},
	}
	// go-sdk answers a server's sampling/createMessage and
	// elicitation/create with these (inputwire.SamplingWithTools,
	// RecoveredElicitation): they refuse what go-sdk's conversion would
	// panic on, and recover. A 2026-07-28 round's questions are the
	// client's own loop's (inputwire.AutoRounds, below).
	if h := c.opts.SamplingHandler; h != nil {
		//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
		o.CreateMessageWithToolsHandler = inputwire.SamplingWithTools(c.log, h)
		// Sampling without tools, as for a CreateMessageHandler.
		//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
		o.Capabilities.Sampling = &mcp.SamplingCapabilities{}
	}
	if h := c.opts.ElicitationHandler; h != nil {
		o.ElicitationHandler = inputwire.RecoveredElicitation(c.log, inputwire.WebPagesOnly(c.log, h))
	}
	if len(c.opts.Roots) > 0 || c.opts.RootsHandler != nil {
		//lint:ignore SA1019 roots, sampling and logging are deprecated in 2026-07-28 but live in the handshake era, which we support
		o.Capabilities.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	if c.opts.Relay {
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	c.cache.AddHandlers(o)
	return o
}

// engineConfig is what the connection engine needs of c: its target and
// options as plain values, go-sdk's client, and the features' hooks (the
// HTTP layers of headers and credentials, telemetry, the cache).
func (c *Client) engineConfig() engine.Config {
	cfg := engine.Config{
		Name:            c.name,
		Kind:            c.ep.Kind,
		URL:             c.ep.URL,
		FallbackSSE:     c.ep.FallbackSSE,
		Server:          c.ep.Server,
		SDK:             c.sdk,
		Observer:        c.obs,
		Log:             c.log,
		ConnectTimeout:  c.opts.connectTimeout(),
		ProbeTimeout:    c.opts.probeTimeout(),
		CloseGrace:      c.opts.closeGrace(),
		MaxMessageBytes: c.opts.maxMessageBytes(),
		Version:         c.opts.ProtocolVersion,
		HTTPClient:      c.opts.HTTPClient,
		WrapHTTP:        c.wrapHTTP,
		OAuth:           c.oauth,
		OnLost:          c.cache.ForgetDiscover,
		Partition:       partitionOf,
		Detach:          detachIdentity,
		MaxSessions:     c.opts.maxSessions(),
		IdleTimeout:     c.opts.sessionIdleTimeout(),
		FastPath:        !c.opts.DisableFastPath,
		Trace:           c.opts.Trace,
	}
	if c.ep.Kind == engine.Stdio {
		cfg.Stdio = c.stdioTransport(c.ep.Command)
	}
	if p := c.opts.naming; p != nil {
		cfg.NameOf, cfg.OnDial = p.Peek, c.onDial
	}
	if c.opts.Telemetry != nil {
		cfg.StartConnect = func(caller, conn context.Context) (context.Context, func(*engine.Session, error)) {
			// The span belongs to the caller's trace; the connection keeps
			// none of the caller's values.
			_, end := c.startOp(caller, "connect", "")
			return conn, func(s *engine.Session, err error) {
				r := OperationResult{Err: err, ErrorType: ErrorType(err)}
				if s != nil {
					r.SessionID, r.ProtocolVersion = s.ID(), s.ProtocolVersion()
				}
				end(r)
			}
		}
	}
	return cfg
}

// session returns the live session, connecting if there is none.
func (c *Client) session(ctx context.Context) (*engine.Session, error) { return c.eng.Session(ctx) }

// request describes a request bounded by ClientOptions.Timeout.
func (c *Client) request(op, tool string) engine.Request {
	return engine.Request{Op: op, Tool: tool, Timeout: c.opts.Timeout}
}

// send runs fn on the live session (see engine.Engine.Send): it is the one
// way every request reaches the server.
func (c *Client) send(ctx context.Context, r engine.Request, fn func(context.Context, *engine.Session) error) error {
	return c.eng.Send(ctx, r, fn)
}

// transportError wraps err as a *TransportError of this client's server
// (see engine.Engine.TransportError).
func (c *Client) transportError(s *engine.Session, op, tool string, err error) error {
	return c.eng.TransportError(s, op, tool, err)
}

// retire makes the next request connect anew; the requests in flight
// finish first.
func (c *Client) retire() { c.eng.Retire() }

// pin makes later connections ask for version (a group pulled down to the
// handshake era).
func (c *Client) pin(version string) { c.eng.Pin(version) }

// pinned returns the protocol version later connections ask for.
func (c *Client) pinned() string { return c.eng.Pinned() }

// Name returns the server's name as this client knows it. With
// ClientOptions.NameFromServer, call it after the first connection
// (Connect): before, it settles the name to Command.Name.
func (c *Client) Name() string { return c.nameNow() }

// nameNow returns c's name, settling a name NameFromServer has not
// settled yet to its fallback.
func (c *Client) nameNow() string {
	p := c.opts.naming
	if p == nil {
		return c.name
	}
	c.nameMu.Lock()
	named := c.named
	c.nameMu.Unlock()
	if named {
		return c.name
	}
	return c.adoptName(p.Name())
}

// adoptName writes name, which c.opts.naming settled, as c's name unless
// c has one already, and returns c's name.
func (c *Client) adoptName(name string) string {
	c.nameMu.Lock()
	defer c.nameMu.Unlock()
	if !c.named {
		c.name, c.named = name, true
	}
	return c.name
}

// onDial settles a NameFromServer name when a connect ends: the name
// the server gave in its handshake, or the fallback (a failed connect, a
// server that gives no usable name).
func (c *Client) onDial(s *engine.Session, _ error) {
	raw := ""
	if s != nil {
		if r := s.SDK().InitializeResult(); r != nil && r.ServerInfo != nil {
			raw = r.ServerInfo.Name
		}
	}
	c.adoptName(c.opts.naming.Settle(servername.FromServerInfo(raw)))
}

// nameSettled reports whether c's name is known: always, unless
// NameFromServer waits for the first connection.
func (c *Client) nameSettled() bool {
	if c.opts.naming == nil {
		return true
	}
	c.nameMu.Lock()
	defer c.nameMu.Unlock()
	return c.named
}

// opServer is the server name of an operation starting now (Telemetry):
// a NameFromServer client with no name yet connects first, unless the
// operation is that connect, which has no name ("").
func (c *Client) opServer(ctx context.Context, method string) string {
	if method == "connect" && !c.nameSettled() {
		return ""
	}
	return c.nameAt(ctx)
}

// nameAt returns c's name for an operation that records it or checks
// a handle against it: a NameFromServer client with no name yet
// connects first, so that its server names it.
func (c *Client) nameAt(ctx context.Context) string {
	if c.nameSettled() {
		return c.name
	}
	_, _ = c.session(ctx) // the operation reports a failure itself
	return c.nameNow()
}

// Connect connects now if not connected, and reports the connection (over
// HTTP, the connection of ctx's principal: what the server told them).
func (c *Client) Connect(ctx context.Context) (*ServerInfo, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	info := c.infoOf(s)
	return &info, nil
}

// Session returns the live go-sdk session (over HTTP, that of ctx's
// principal), connecting first if needed, for everything this package
// does not wrap. Do not close it; use Client.Close.
// A session that is lost is not re-established by itself: call Session
// again. Its tools/call, resources/read, prompts/get and
// completion/complete return, as the Client's own do, once the
// notifications the server sent before their answer (log messages,
// progress) have reached their handlers, also when go-sdk fails decoding
// the answer; that wait ends with the request's context, with the
// connection, or after a second in which no notification was handled (a
// handler that blocks). One made inside a handler of the Client's
// notifications (a LogHandler), with the handler's context, does not
// wait: the notifications read after the one being handled wait for that
// handler to return.
func (c *Client) Session(ctx context.Context) (*mcp.ClientSession, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	return s.SDK(), nil
}

// Close ends the live connections, if any: a stdio server and its process
// group are stopped. The Client stays usable: the next request reconnects.
// Requests in flight fail with a TransportError, and the server is told
// of each (notifications/cancelled) before its connection is closed,
// within ClientOptions.StopTimeout for a server that does not take the
// notices. A Close called while another is under way returns only once
// that one's connections are closed too. Close also ends, and
// waits for, the client's wait for the answers of calls whose context
// ended (see CallOptions.Task). In ElicitInterrupt mode, a server waiting
// for the user's answer to a question is told "cancel" first, and Close
// waits for its call to end, at most a few seconds, before it closes the
// connection.
func (c *Client) Close() error {
	if c.interrupt != nil {
		c.closeQuestions()
	}
	wait := c.bg.Stop()
	err := c.eng.Close()
	wait()
	if c.oauthFlow != nil && c.interrupt == nil {
		// An interrupt clone shares this Client's flow; this one closes it.
		c.oauthFlow.Close()
	}
	return err
}

// String describes c by its name; a name NameFromServer has not settled
// yet is shown as its fallback, and stays unsettled.
func (c *Client) String() string {
	name := c.name
	if c.opts.naming != nil {
		name = c.opts.naming.Peek()
	}
	return fmt.Sprintf("mcpadapter.Client(%s)", name)
}

// modulePath is this module's path, as the go command records it in a
// program's build information.
const modulePath = "github.com/mcpadapter/mcpadapter"

// Version returns the version of this module the running program was built
// with, as the go command recorded it ("v0.1.0"). A program built from a
// clone of the repository (its own module, or the module taken from a
// directory through go.work or a replace directive) reports "(devel)", as
// the go command does for such builds. NewClient sends it to servers as the
// client's version.
func Version() string { return buildVersion() }

var buildVersion = sync.OnceValue(func() string { return buildinfo.Version(modulePath) })
