//lint:file-ignore SA1019 the gateway relays roots, sampling and logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Gateway serves the servers it is given as one MCP server: an
// http.Handler for streamable HTTP clients of every protocol version, and
// ServeStdio for one client over standard input and output. Build it with
// New, Start it, and Close (or Shutdown) it.
type Gateway struct {
	opts   Options
	quota  *quota       // Options.Limits; nil: none
	log    *slog.Logger // its handler redacts
	red    *redactor
	server *mcp.Server
	impl   *mcp.Implementation // the server's, as its answers name it
	cat    *catalog
	search *search
	parks  *parking
	tasks  *taskStore
	// relays take the servers' progress and log messages to the client
	// sessions (relay.go).
	relays *relays

	stateful, stateless httpHandler
	// directChain is the receiving middleware over directTool, for the
	// fast path's direct calls (direct.go).
	directChain mcp.MethodHandler
	// capsMemo is the last client capabilities of a lean one-request
	// session forwardMeta encoded (capsForward).
	capsMemo atomic.Pointer[capsEncoded]
	// capsByAddr is the last other client capabilities forwarded, as
	// forwardMeta sends them (call.go: sessionCaps).
	capsByAddr atomic.Pointer[capsAt]
	// serverInfoMeta is a result's _meta naming only the server (impl),
	// encoded (plainResult).
	serverInfoMeta []byte

	ctx    context.Context // ends when the gateway closes
	cancel context.CancelFunc
	wg     sync.WaitGroup // the servers' supervisors

	upsMu    sync.Mutex
	ups      []*upstream // the servers, in config order (Reload replaces it)
	reloadMu sync.Mutex  // one Reload at a time, none during Close

	draining atomic.Bool // Shutdown was called: new requests are refused
	// drained ends when Shutdown (or Close) is called: the calls waiting
	// for a sign-in end then (signin_wait.go).
	drained  context.Context
	drain    context.CancelFunc
	inflight sync.WaitGroup // forwarded requests in flight
	// writes are the answers being written, which Close ends.
	writes  answerWriters
	nflight atomic.Int64 // how many, for Shutdown's messages and tests
	// posts counts the HTTP POSTs being answered: a call's answer is
	// written after its handler returns (and ends inflight's count).
	posts atomic.Int64
	// httpCtx holds what the operations of each HTTP request being
	// handled learn of it (*httpRequest), by its header (headerKey), with
	// Options.Telemetry or when a server's credential is exchanged per
	// principal (exchanges); stdioIDs the ids of stdio clients' requests.
	httpCtx  sync.Map
	stdioIDs stdioIDs
	// clock times the handshake-era sessions for
	// mcpadapter.ServerSessionTelemetry.
	clock sessionClock
	// exchanges is set once a server's credential is exchanged per
	// principal: the requests' access tokens are then handed on from
	// their HTTP contexts (credentials.go).
	exchanges atomic.Bool
	// pages are the sign-in pages (Options.SignIn); nil: none.
	pages *signInPages
	// signins are the sign-in questions asked of handshake-era sessions
	// (signin_wait.go).
	signins signInWaits

	started atomic.Bool
	closed  sync.Once

	sessMu   sync.Mutex
	sessions map[*mcp.ServerSession]*int   // tool calls in flight by client session
	running  map[string]*runningReq        // requests being handled, by session id: the first of a list
	levels   map[*mcp.ServerSession]string // log levels set by handshake-era sessions

	pol        atomic.Pointer[Policy] // Options.Policy, or SetPolicy's
	shared     *sharedSessions        // Options.Sessions; nil: sessions are this process's
	sessWG     sync.WaitGroup         // the waits for the end of the shared sessions held here
	streams    sync.WaitGroup         // the goroutines of the streams on connections taken over (streamconn.go)
	streamPoll lazyPoller             // watches those connections for their clients' end (Linux)
	live       liveSessions           // without shared sessions: the handshake-era sessions (fastsession.go)
	slots      *sessionSlots          // the handshake-era sessions held, against Options.MaxSessions
	events     *eventStore            // the events of the handshake-era sessions' streams (http.go)
	// sessionFast counts the calls answered on the session fast path.
	sessionFast atomic.Int64
	// early sends the header of a long call on the session fast path
	// ahead of its answer.
	early earlyHeaders
}

// New returns a gateway for servers; opts may be nil. Server names must be
// distinct and match ^[A-Za-z0-9_-]{1,64}$ (config keys already do). New
// builds every server's client but connects none: Start does.
func New(servers []Server, opts *Options) (*Gateway, error) {
	g := &Gateway{sessions: make(map[*mcp.ServerSession]*int), running: make(map[string]*runningReq), levels: make(map[*mcp.ServerSession]string)}
	if opts != nil {
		g.opts = *opts
	}
	g.early.delay = sessionFastHeaderDelay
	g.red = newRedactor(servers)
	g.slots = newSessionSlots(&g.opts)
	g.log = g.opts.Logger
	if g.log == nil {
		g.log = slog.Default()
	}
	g.log = slog.New(wire.RedactErrors(g.red.handler(g.log.Handler())))
	q, err := newQuota(g.opts.Limits, g.log)
	if err != nil {
		return nil, err
	}
	g.quota = q
	if g.opts.Policy != nil {
		p := g.opts.Policy
		g.pol.Store(&p)
	}
	if g.opts.Sessions != nil {
		if g.shared, err = newSharedSessions(g.opts.Sessions, g.opts.SessionTimeout, g.opts.parkTimeout()); err != nil {
			return nil, err
		}
		g.shared.events = newSharedEvents(g)
		g.shared.warn = g.log.Warn
	}
	if len(servers) == 0 {
		return nil, errors.New("gateway: no servers")
	}
	prefix := g.opts.Prefix
	if prefix == mcpadapter.PrefixAuto {
		prefix = mcpadapter.PrefixNever
		if len(servers) > 1 {
			prefix = mcpadapter.PrefixAlways
		}
	}
	g.opts.Prefix = prefix
	g.server = g.newServer()
	if err := g.addTaskMethods(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.tasks = newTaskStore(g)
	g.cat = newCatalog(g)
	g.search = newSearch(g)
	g.parks = newParking(g.opts.parkTimeout())
	if g.opts.SignIn != nil {
		if g.pages, err = newSignInPages(g, g.opts.SignIn); err != nil {
			return nil, err
		}
	}
	seen := make(map[string]bool)
	var errs []error
	for _, s := range servers {
		if s.Name == "" && s.Config != nil {
			s.Name = s.Config.Name
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("gateway: two servers are named %q", s.Name))
			continue
		}
		seen[s.Name] = true
		u, err := newUpstream(g, s, prefix)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.ups = append(g.ups, u)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	g.cat.order = g.ups
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.drained, g.drain = context.WithCancel(context.Background())
	g.relays = newRelays(g.ctx, g.log, &g.opts)
	for _, u := range g.ups {
		u.ctx, u.stop = context.WithCancel(g.ctx)
	}
	g.directChain = g.middleware(g.directTool)
	g.stateful, g.stateless = g.newHTTPHandlers()
	return g, nil
}

// newServer returns the go-sdk server the clients talk to.
func (g *Gateway) newServer() *mcp.Server {
	name, version := g.opts.Name, g.opts.Version
	if name == "" {
		name = "mcpadapter-gateway"
	}
	if version == "" {
		version = mcpadapter.Version()
	}
	caps := &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		Logging:   &mcp.LoggingCapabilities{},
	}
	caps.AddExtension(taskwire.Extension, map[string]any{}) // tasks.go
	g.impl = &mcp.Implementation{Name: name, Version: version}
	g.serverInfoMeta = serverInfoMeta(g.impl)
	s := mcp.NewServer(g.impl, &mcp.ServerOptions{
		Instructions:       g.opts.Instructions,
		Logger:             g.log.With("component", "go-sdk server"),
		HasTools:           true,
		HasPrompts:         true,
		HasResources:       true,
		CompletionHandler:  g.complete,
		SubscribeHandler:   g.subscribe,
		UnsubscribeHandler: g.unsubscribe,
		Capabilities:       caps,
		GetSessionID:       g.nextSessionID,
	})
	s.AddReceivingMiddleware(g.middleware)
	s.AddSendingMiddleware(g.filterSent)
	return s
}

// Start connects every server at once and lists what it offers, returning
// when each has come up or failed once (or ctx ends). A server that failed
// is reported (Options.OnEvent, Servers) and tried again in the background;
// the others serve. Start fails only when two servers that came up claim
// the same tool name: the error names both.
func (g *Gateway) Start(ctx context.Context) error {
	if !g.started.CompareAndSwap(false, true) {
		return errors.New("gateway: Start called twice")
	}
	g.tasks.run() // with TaskOptions.Store: this replica's liveness record
	if g.shared != nil {
		g.wg.Go(func() { g.pollHanded(g.ctx) })
		if g.shared.notifier != nil {
			g.wg.Go(func() { g.listenSessions(g.ctx) })
		}
	}
	if err := g.runAll(ctx, g.servers()); err != nil {
		return err
	}
	return errors.Join(g.startProblems()...)
}

// servers returns the gateway's servers, in config order.
func (g *Gateway) servers() []*upstream {
	g.upsMu.Lock()
	defer g.upsMu.Unlock()
	return g.ups
}

// runAll starts the supervisors of ups and returns when each has come up
// or failed once, or ctx ends.
func (g *Gateway) runAll(ctx context.Context, ups []*upstream) error {
	var ready sync.WaitGroup
	for _, u := range ups {
		ready.Add(1)
		g.wg.Go(func() {
			defer close(u.done)
			u.run(u.ctx, ready.Done)
		})
	}
	done := make(chan struct{})
	go func() { ready.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// startProblems returns the tool name collisions among the servers that
// are up.
func (g *Gateway) startProblems() []error {
	g.cat.mu.Lock()
	defer g.cat.mu.Unlock()
	var out []error
	seen := make(map[string]string)
	for _, u := range g.cat.order {
		l := g.cat.lists[u]
		if l == nil {
			continue
		}
		for _, t := range l.tools {
			if prev, ok := seen[t.Name]; ok && prev != u.name {
				out = append(out, fmt.Errorf("gateway: %w", &mcpadapter.NameCollisionError{Name: t.Name, First: prev + "/" + g.cat.tools[t.Name].tool.OriginalName, Second: u.name + "/" + t.OriginalName}))
				continue
			}
			seen[t.Name] = u.name
		}
	}
	return out
}

// ServerStatus describes one server of the gateway.
type ServerStatus struct {
	Name string
	Up   bool
	// Err is why the server is down.
	Err error
	// Info describes the connection when the server has been up.
	Info *mcpadapter.ServerInfo
	// Tools is how many tools of the server clients see.
	Tools int
}

// Servers describes the gateway's servers, in order.
func (g *Gateway) Servers() []ServerStatus {
	ups := g.servers()
	out := make([]ServerStatus, 0, len(ups))
	for _, u := range ups {
		up, info, err := u.status()
		st := ServerStatus{Name: u.name, Up: up, Err: g.red.err(err), Info: info}
		g.cat.mu.Lock()
		for _, r := range g.cat.tools {
			if r.u == u {
				st.Tools++
			}
		}
		g.cat.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Close ends every client session, cancels the calls in flight and stops
// the servers (stdio children included). With TaskOptions.Store, the
// servers' own tasks are not cancelled: the other replicas follow them
// (tasks_handover.go). It returns once the servers' supervisors have
// ended. The HTTP answers being written, and those begun while it runs,
// get a second each (a write deadline, through http.ResponseController):
// a middleware that wraps the ResponseWriter must let it through
// (Unwrap), or a client that stops reading keeps Close waiting.
func (g *Gateway) Close() error {
	var err error
	g.closed.Do(func() {
		g.draining.Store(true)
		g.drain()
		g.cancel()
		cut := g.writes.cutAll()
		g.reloadMu.Lock() // a Reload under way ends first
		defer g.reloadMu.Unlock()
		g.parks.closeAll(errClosed)
		if g.shared != nil {
			g.shared.shut()
		}
		g.clock.shut()
		g.live.shut()
		g.early.close()
		for ss := range g.server.Sessions() {
			_ = ss.Close()
		}
		// Writers held up by a cut write fail at cut; each gets the slack
		// past it even when the steps above took longer.
		g.relays.wait(max(time.Until(cut), 0) + closeWriteSlack)
		g.sessWG.Wait()
		g.streams.Wait()
		g.streamPoll.close()
		if g.shared != nil {
			g.shared.releaseClaims() // claims of requests still winding down
		}
		g.clock.wg.Wait()
		// The tasks' calls end first: their servers are told (a
		// cancellation, or tasks/cancel) while the connections are up.
		// With a task store, the servers' own tasks are handed over to
		// the other replicas instead, and their following here ends
		// once the connections are closed (tasks_handover.go).
		g.tasks.close()
		var errs []error
		for _, u := range g.servers() {
			if e := u.close(); e != nil {
				errs = append(errs, fmt.Errorf("server %q: %w", u.name, e))
			}
		}
		g.tasks.wait()
		g.wg.Wait()
		err = errors.Join(errs...)
	})
	return err
}

// Shutdown stops taking requests (new ones are refused with an error that
// says the gateway is shutting down), ends the calls waiting for their
// user to sign in with that error (none was made: the client makes it
// again on another instance), waits for the requests in flight to end or
// ctx to end, then closes the gateway. With TaskOptions.Store it waits
// for the calls of tasks the gateway runs itself too, and Close hands the
// servers' own tasks over to the other replicas.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.draining.Store(true)
	g.drain()
	done := make(chan struct{})
	go func() {
		g.inflight.Wait()
		g.tasks.waitPlain(ctx) // with a task store: the calls it runs itself end
		close(done)
	}()
	var err error
	select {
	case <-done:
		// The answers of the last calls may still be on their way out.
		for g.posts.Load() > 0 && err == nil {
			select {
			case <-time.After(5 * time.Millisecond):
			case <-ctx.Done():
				err = fmt.Errorf("gateway: answers still being written when the grace period ended: %w", context.Cause(ctx))
			}
		}
	case <-ctx.Done():
		err = fmt.Errorf("gateway: requests still in flight when the grace period ended: %w", context.Cause(ctx))
	}
	return errors.Join(err, g.Close())
}

// event reports what happened to a server.
func (g *Gateway) event(e Event) {
	e.Err = g.red.err(e.Err)
	switch e.Kind {
	case ServerUp:
		g.log.Info("server up", "server", e.Server)
	case ServerDown:
		g.log.Warn("server down", "server", e.Server, "reason", e.Err)
	case ServerRemoved:
		g.log.Info("server removed from the config", "server", e.Server)
	default:
		g.log.Warn("server problem", "server", e.Server, "problem", e.Err)
	}
	if g.opts.OnEvent != nil {
		g.onEvent(e)
	}
}

// upstream returns the server named name, or nil.
func (g *Gateway) upstream(name string) *upstream {
	for _, u := range g.servers() {
		if u.name == name {
			return u
		}
	}
	return nil
}

// promptPrefix returns what starts the names of u's prompts: the config's
// "prefix", else the server's name when names are prefixed.
func (g *Gateway) promptPrefix(u *upstream) string {
	if p := u.prefix; p != "" {
		return p
	}
	if g.opts.Prefix == mcpadapter.PrefixAlways {
		return u.name
	}
	return ""
}
