//lint:file-ignore SA1019 the gateway relays roots, sampling and logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is one server behind the gateway: its client (one connection,
// shared by every client of the gateway), what it lists, and the calls in
// flight on it.
type upstream struct {
	g       *Gateway
	spec    Server // what it was built from: Reload compares it
	name    string
	prefix  string // the server's own prefix ("prefix" in its config entry)
	client  *mcpadapter.Client
	adapter *mcpadapter.Adapter // the server's tools, named and shaped
	lane    *lane
	// ready asks a handshake-era server for every log message on each
	// session of client, once (a session per principal over HTTP for a
	// server whose credential is per principal).
	ready *readied
	// pool holds the extra connections to a handshake-era server
	// (pool.go); nil means none.
	pool *pool
	// callSlots caps the tool calls in flight on all the server's
	// connections (callCap); nil means no cap.
	callSlots chan struct{}
	// creds, if set, are the server's credentials per principal
	// (credentials.go); nil: one credential for all.
	creds *principalCreds
	// web, if set, signs each principal in to the server through the
	// gateway (signin.go).
	web *mcpadapter.WebSignIn
	// webURL is the server's URL its tokens are kept under (with web).
	webURL string
	// reauth is the base transport of such a server (credentials.go).
	reauth *reauth
	// taskSem caps tasks' calls in flight at half the server's cap on
	// calls (tasks.go); nil means no cap.
	taskSem chan struct{}
	kick    chan struct{} // a list changed: list again (buffered)
	// announced holds the lists the server said changed since the last
	// listing (changedTools, ...).
	announced atomic.Uint32
	// ctx ends when the gateway closes or Reload removes the server;
	// stop ends it; done is closed when its supervisor has returned.
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}
	// closed is set by close: the server is gone for good (Reload
	// removed it, or the gateway closed). A request no longer goes to it
	// again, and one that leaves its connection closes the client once
	// more: the client reconnects on a request, and the process it would
	// start has no one else to stop it.
	closed atomic.Bool

	mu     sync.Mutex
	up     bool
	err    error // why the server is down
	info   *mcpadapter.ServerInfo
	caps   *mcp.ServerCapabilities
	modern bool                                              // the connection speaks 2026-07-28
	subs   map[string]map[*mcp.ServerSession]context.Context // client sessions subscribed, by resource URI, with whom each is for (policyContext)
}

// newUpstream builds the client of s, with the gateway's handlers.
func newUpstream(g *Gateway, s Server, prefix mcpadapter.PrefixMode) (*upstream, error) {
	u := &upstream{g: g, spec: s, name: s.Name, lane: newLane(), ready: &readied{prepare: askLogs}, kick: make(chan struct{}, 1), done: make(chan struct{}), subs: make(map[string]map[*mcp.ServerSession]context.Context)}
	if s.Config != nil {
		u.prefix = s.Config.Prefix
	}
	if tr := g.opts.Transforms[s.Name]; tr != nil && tr.Prefix != "" {
		u.prefix = tr.Prefix
	}
	var co mcpadapter.ClientOptions
	if g.opts.Client != nil {
		co = *g.opts.Client
	}
	// The server's client applies the server's limits to every call:
	// its time limits (the config entry's, Options.Client's, the tools'
	// own through their transforms) and the cap on calls in flight.
	if n := callCap(g.opts.maxCallsPerServer(), s, co); n > 0 {
		co.MaxConcurrentCalls = n
		if s.Config != nil {
			sc := *s.Config
			sc.MaxConcurrentCalls = n
			s.Config = &sc
		}
		u.taskSem = make(chan struct{}, max(1, n/2))
		u.callSlots = make(chan struct{}, n)
	}
	co.Name = s.Name
	if co.Telemetry != nil {
		co.Telemetry = redactedTelemetry{t: co.Telemetry, red: g.red}
	}
	if co.Logger == nil {
		co.Logger = g.log
	} else {
		co.Logger = slog.New(g.red.handler(co.Logger.Handler()))
	}
	co.ProgressHandler = nil // a call's progress goes to its CallOptions.Progress
	u.askVia(&co, u.lane)
	co.Roots = nil
	co.MessageHandler = u.onMessage
	co.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { u.changed(changedTools) }
	co.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { u.changed(changedPrompts) }
	co.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { u.changed(changedResources) }
	co.Relay = true
	s, err := u.perPrincipal(s, &co)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", s.Name, err)
	}
	var grp *mcpadapter.Group
	if s.Config != nil {
		grp, err = mcpadapter.NewGroup(&mcpadapter.Config{Servers: []*mcpadapter.ServerConfig{s.Config}}, &co)
	} else {
		var c *mcpadapter.Client
		if c, err = mcpadapter.NewClient(s.Target, &co); err == nil {
			grp, err = mcpadapter.GroupOf(c)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", s.Name, err)
	}
	u.client = grp.Clients()[0]
	if n := g.opts.maxExtraConnections(); n > 0 {
		u.pool = &pool{max: n, wait: g.opts.extraIdleTime(), open: func(l *lane) (*mcpadapter.Client, error) {
			return extraClient(s, co, u, l)
		}, prepare: askLogs}
	}
	// App-only tools pass, with their _meta.ui: the client is a host,
	// which keeps them from its model and lets its apps call them.
	ao := &mcpadapter.Options{Prefix: prefix, ToolFilter: g.safeToolFilter(), AppTools: true}
	if tr := g.opts.Transforms[s.Name]; tr != nil {
		ao.Transforms = map[string]*mcpadapter.ServerTransform{s.Name: tr}
	}
	if u.adapter, err = mcpadapter.New(grp, ao); err != nil {
		return nil, fmt.Errorf("server %q: %w", s.Name, err)
	}
	return u, nil
}

// extraClient makes the client of an extra connection to s (pool.go),
// with the shared connection's options co, whose server requests go
// through l. Its calls count against the server's cap (callSlots), not
// a cap of its own.
func extraClient(s Server, co mcpadapter.ClientOptions, u *upstream, l *lane) (*mcpadapter.Client, error) {
	co.MaxConcurrentCalls = 0
	u.askVia(&co, l)
	if s.Config == nil {
		return mcpadapter.NewClient(s.Target, &co)
	}
	sc := *s.Config
	sc.MaxConcurrentCalls = 0
	grp, err := mcpadapter.NewGroup(&mcpadapter.Config{Servers: []*mcpadapter.ServerConfig{&sc}}, &co)
	if err != nil {
		return nil, err
	}
	return grp.Clients()[0], nil
}

// askVia sets the handlers of co that take a handshake-era server's
// questions and log messages to the client whose call they are for, as
// the lane l of the connection says (lane.go).
func (u *upstream) askVia(co *mcpadapter.ClientOptions, l *lane) {
	co.LogHandler = func(ctx context.Context, req *mcp.LoggingMessageRequest) { u.onLog(ctx, l, req) }
	co.SamplingHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return u.onSample(ctx, l, req)
	}
	co.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return u.onElicit(ctx, l, req)
	}
	co.RootsHandler = func(ctx context.Context, req *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
		return u.onRoots(ctx, l, req)
	}
}

// close closes the server's client and its extra connections, for good.
func (u *upstream) close() error {
	u.closed.Store(true)
	err := errors.Join(u.pool.close(), u.client.Close())
	u.reauth.closeIdle()
	return err
}

// changed records that the server announced a change of the lists in
// bits, and asks for a listing.
func (u *upstream) changed(bits uint32) {
	u.announced.Or(bits)
	u.relistSoon()
}

// relistSoon asks the supervisor to list the server again.
func (u *upstream) relistSoon() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// run keeps the server connected and its lists published until ctx ends:
// it connects, lists, waits for the connection to end or a list to change,
// and after a failure tries again with a growing pause (at most 30 s).
// A stdio server whose process ended is reported down before it is
// started again; an HTTP session that ended is made again at once, and
// reported only if that fails. ready is called after the first attempt,
// whatever its outcome, or when run returns without one (ctx ended first:
// Reload removed the server).
func (u *upstream) run(ctx context.Context, ready func()) {
	defer func() {
		if ready != nil {
			ready()
		}
	}()
	fails := 0
	var prev *mcp.ClientSession // the session that ended last
	quick := 0
	for ctx.Err() == nil {
		cs, err := u.connect(ctx, prev)
		if err == nil {
			err = u.relist(ctx)
		}
		if ready != nil {
			ready()
			ready = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if prev != nil && quick > 0 {
				// An HTTP session just ended: a new one may be lost too
				// (the server restarting); try again at once a few times
				// before saying the server is down.
				quick--
				if !sleep(ctx, 50*time.Millisecond) {
					return
				}
				continue
			}
			u.setDown(err)
			_ = u.client.Close()
			fails++
			if !sleep(ctx, backoff(fails)) {
				return
			}
			continue
		}
		fails = 0
		if !u.watch(ctx, cs) {
			return
		}
		prev, quick = cs, 3
		if u.transport() == "stdio" {
			u.setDown(errors.New("its process exited"))
			if !sleep(ctx, 100*time.Millisecond) {
				return
			}
		}
	}
}

// watch waits for the connection to end (true) or ctx to end (false),
// listing the server again when it announces a change.
func (u *upstream) watch(ctx context.Context, cs *mcp.ClientSession) bool {
	ended := make(chan struct{})
	go func() { _ = cs.Wait(); close(ended) }()
	for {
		select {
		case <-ended:
			return true
		case <-u.kick:
			if err := u.relist(ctx); err != nil && ctx.Err() == nil {
				u.g.event(Event{Kind: ServerProblem, Server: u.name, Err: fmt.Errorf("listing again after a change: %w", err)})
			}
		case <-ctx.Done():
			return false
		}
	}
}

func (u *upstream) transport() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.info == nil {
		return ""
	}
	return u.info.Transport
}

func backoff(fails int) time.Duration {
	d := 500 * time.Millisecond << min(fails-1, 6)
	return min(d, 30*time.Second)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// connect connects (or reconnects) the server and learns what it offers.
// prev, if not nil, is a session that has ended.
func (u *upstream) connect(ctx context.Context, prev *mcp.ClientSession) (*mcp.ClientSession, error) {
	cs, err := u.session(ctx, u.client, prev)
	if err != nil {
		return nil, err
	}
	info, err := u.client.Connect(ctx)
	if err != nil {
		return nil, err
	}
	var caps *mcp.ServerCapabilities
	if ir := cs.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	modern := info.Era == mcpadapter.EraDiscover
	if !modern {
		u.ready.mark(ctx, cs, true)
	}
	u.mu.Lock()
	u.info, u.caps, u.modern = info, caps, modern
	subs := make([]string, 0, len(u.subs))
	for uri := range u.subs {
		subs = append(subs, uri)
	}
	u.mu.Unlock()
	for _, uri := range subs { // resubscribe on a new connection
		_ = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	}
	return cs, nil
}

// askLogs asks a handshake-era server for every log message on cs, if it
// sends any: each client session gets those at its own level (go-sdk's
// ServerSession.Log).
func askLogs(ctx context.Context, cs *mcp.ClientSession) {
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil {
		_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
	}
}

// session returns the live session of c, a client of the server,
// connecting if needed. prev, if not nil, is a session that has ended:
// the client learns that on its own an instant after, so session waits
// (a little) for one that is not prev.
func (u *upstream) session(ctx context.Context, c *mcpadapter.Client, prev *mcp.ClientSession) (*mcp.ClientSession, error) {
	for i := 0; ; i++ {
		cs, err := c.Session(ctx)
		if err != nil || cs != prev || i == 100 {
			return cs, err
		}
		if !sleep(ctx, 10*time.Millisecond) {
			return nil, context.Cause(ctx)
		}
	}
}

// relist lists everything the server offers and publishes it.
func (u *upstream) relist(ctx context.Context) error {
	announced := u.announced.Swap(0)
	tools, err := u.adapter.Tools(ctx)
	if err != nil {
		return err
	}
	l := &listing{tools: tools}
	u.mu.Lock()
	caps := u.caps
	u.mu.Unlock()
	if caps == nil || caps.Prompts != nil {
		if l.prompts, err = u.client.ListPrompts(ctx); err != nil && caps != nil {
			return fmt.Errorf("prompts/list: %w", err)
		}
	}
	if caps == nil || caps.Resources != nil {
		if l.resources, err = u.client.ListResources(ctx); err != nil && caps != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		if l.templates, err = u.client.ListResourceTemplates(ctx); err != nil && caps != nil {
			return fmt.Errorf("resources/templates/list: %w", err)
		}
	}
	u.mu.Lock()
	first := !u.up
	u.up, u.err = true, nil
	info := u.info
	u.mu.Unlock()
	u.g.cat.publish(u, l, announced)
	if first {
		u.g.event(Event{Kind: ServerUp, Server: u.name, Info: info})
	}
	return nil
}

// setDown marks the server down: its items leave the catalog.
func (u *upstream) setDown(err error) {
	u.mu.Lock()
	was := u.up || u.err == nil
	u.up, u.err = false, err
	u.mu.Unlock()
	u.g.cat.publish(u, nil, 0)
	if was {
		u.g.event(Event{Kind: ServerDown, Server: u.name, Err: err})
	}
}

// status returns whether the server is up, and why not.
func (u *upstream) status() (bool, *mcpadapter.ServerInfo, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.up, u.info, u.err
}

func (u *upstream) isModern() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.modern
}

// do runs fn on the server's session for o's request, with the request
// recorded in flight (for attribution), and again once on a new session
// when the server had lost the first (it never saw the request), or when
// idempotent and the connection was closed before the answer. With
// anyConn the request may run on an extra connection (pool.go); without,
// it runs on the shared one (a subscription, which lives there).
func (u *upstream) do(ctx context.Context, o *origin, idempotent, anyConn bool, fn func(context.Context, *mcp.ClientSession) error) error {
	if up, _, err := u.status(); !up {
		return &unavailableError{server: u.name, err: err}
	}
	ctx, err := u.as(ctx)
	if err != nil {
		return err
	}
	// Its connection numbers the request's event streams: a log message
	// read on them is its own (lane.attributeLog).
	ctx = order.WithStreams(ctx, new(order.Streams))
	c, leave, err := u.fly(ctx, o, anyConn)
	if err != nil {
		return err
	}
	// The notifications relayed to o's client before the answer reach
	// it first: the flush runs after leave.
	defer u.g.relays.flush(ctx, o)
	defer leave()
	var prev *mcp.ClientSession
	for attempt := 0; ; attempt++ {
		cs, err := u.session(ctx, c, prev)
		if sr := signInOf(err); sr != nil && u.web != nil {
			// The principal's own connection needs its sign-in.
			_, err = u.g.signInAnswer(o, u, sr, false)
			return err
		}
		if err != nil {
			return &unavailableError{server: u.name, err: err}
		}
		prev = cs
		err = fn(ctx, cs)
		if sr := signInOf(err); sr != nil && u.web != nil {
			_, err = u.g.signInAnswer(o, u, sr, false)
			return err
		}
		if err == nil || attempt > 0 || ctx.Err() != nil || u.closed.Load() {
			return u.wrapErr(err)
		}
		if sessionLost(err) || idempotent && errors.Is(err, mcp.ErrConnectionClosed) {
			u.g.log.Info("the server lost the session; trying again on a new one", "server", u.name)
			waitEnded(ctx, cs)
			continue
		}
		return u.wrapErr(err)
	}
}

// callSlot takes one of the server's call slots (callSlots) until free is
// called, or returns why not when ctx ends first.
func (u *upstream) callSlot(ctx context.Context) (free func(), _ error) {
	free, err := acquire(ctx, u.callSlots)
	if err != nil {
		return nil, fmt.Errorf("not sent: still waiting for one of the server's %d call slots when the call ended: %w", cap(u.callSlots), err)
	}
	return free, nil
}

// sessionLost reports whether err says the server did not know the
// session a request was sent on (HTTP 404): it never saw the request.
// go-sdk reports it as ErrSessionMissing, or in words inside a
// "connection closed" error.
func sessionLost(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing) || strings.Contains(err.Error(), mcp.ErrSessionMissing.Error())
}

// waitEnded waits, briefly, for a session go-sdk is closing to end, so
// that the next request connects anew.
func waitEnded(ctx context.Context, cs *mcp.ClientSession) {
	done := make(chan struct{})
	go func() { _ = cs.Wait(); close(done) }()
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// wrapErr names the server in a failure to reach it; the server's own
// JSON-RPC errors pass unchanged.
func (u *upstream) wrapErr(err error) error {
	if err == nil || isWireError(err) {
		return err
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || sessionLost(err) {
		u.relistSoon()
		return &unavailableError{server: u.name, err: err}
	}
	return err
}

// setSubscribed records whether the client session ss is subscribed to
// uri (forgetting sessions that have ended): subscribed for whom (a
// policyContext), or not when whom is nil. It reports whether that
// changed whether any session is: the gateway's own subscription at the
// server is then to be made or ended.
func (u *upstream) setSubscribed(uri string, ss *mcp.ServerSession, whom context.Context) bool {
	live := make(map[*mcp.ServerSession]bool)
	for s := range u.g.server.Sessions() {
		live[s] = true
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	set := u.subs[uri]
	was := len(set) > 0
	for s := range set {
		if !live[s] {
			delete(set, s)
		}
	}
	if whom != nil {
		if set == nil {
			set = make(map[*mcp.ServerSession]context.Context)
			u.subs[uri] = set
		}
		set[ss] = whom
	} else {
		delete(set, ss)
	}
	if len(set) == 0 {
		delete(u.subs, uri)
	}
	return was != (len(set) > 0)
}

// subscriber returns whom the client session ss subscribed to uri for
// (a policyContext), if it did.
func (u *upstream) subscriber(uri string, ss *mcp.ServerSession) (context.Context, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	whom, ok := u.subs[uri][ss]
	return whom, ok
}

// onElicit, onSample and onRoots take a handshake-era server's questions,
// asked on the connection whose lane is l, to the client whose request
// they are for.
func (u *upstream) onElicit(ctx context.Context, l *lane, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if t := taskFrom(ctx); t != nil { // a question of a task (tasks.go)
		return t.ask(ctx, req.Params)
	}
	conn := connOf(ctx)
	o, err := l.attribute(conn)
	if so, ok := ctx.Value(syncOriginKey{}).(*origin); ok {
		o, l, err = so, nil, nil // the call's own
	}
	if err != nil {
		u.g.log.Warn("refused a server's elicitation", "server", u.name, "reason", err)
		return nil, err
	}
	resp, err := u.ask(ctx, l, o, "elicitation", req.Params)
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return nil, fmt.Errorf("the client answered an elicitation with %T", resp)
	}
	return r, nil
}

func (u *upstream) onSample(ctx context.Context, l *lane, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	conn := connOf(ctx)
	o, err := l.attribute(conn)
	if err != nil {
		u.g.log.Warn("refused a server's sampling request", "server", u.name, "reason", err)
		return nil, err
	}
	resp, err := u.ask(ctx, l, o, "sampling", req.Params)
	if err != nil {
		return nil, err
	}
	return samplingResult(resp)
}

func (u *upstream) onRoots(ctx context.Context, l *lane, req *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	conn := connOf(ctx)
	o, err := l.attribute(conn)
	if err != nil || !o.canAsk("roots") {
		return &mcp.ListRootsResult{Roots: append([]*mcp.Root{}, u.g.opts.Roots...)}, nil
	}
	resp, err := u.ask(ctx, l, o, "roots", &mcp.ListRootsParams{})
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*mcp.ListRootsResult)
	if !ok {
		return nil, fmt.Errorf("the client answered roots/list with %T", resp)
	}
	return r, nil
}

// ask puts a server's question to the client o, bounded by ParkTimeout:
// while it waits, the connection takes no call of another client that
// can be asked (see lane; those go to other connections, pool.go, while
// there is room), so a client that never answers holds them back no
// longer than that. A question the lane l attributed to o may be another
// call's of o's client session: it outlives o's request while the
// session can still answer it (sessionQuestion). With l nil, o is the
// call the question is for.
func (u *upstream) ask(ctx context.Context, l *lane, o *origin, kind string, q mcp.InputRequest) (mcp.InputResponse, error) {
	ctx, cancel := u.g.askBound(ctx, kind)
	defer cancel()
	if l == nil {
		return o.ask(ctx, kind, q)
	}
	ctx, end := u.g.sessionQuestion(ctx, l, o)
	defer end()
	resp, err := o.askSession(ctx, kind, q)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("the gateway's %s request to the client ended: %w", kind, context.Cause(ctx))
	}
	return resp, err
}

// onLog passes a server's log message, sent on the connection whose lane
// is l, to the client whose request it is for, or to the gateway's log.
func (u *upstream) onLog(ctx context.Context, l *lane, req *mcp.LoggingMessageRequest) {
	p := *req.Params
	if p.Logger == "" {
		p.Logger = u.name
	}
	if o := l.attributeLog(connOf(ctx), order.HandlingFrom(ctx), order.StreamFrom(ctx)); o != nil {
		u.g.relays.logMessage(o, &p)
		return
	}
	level := slog.LevelInfo
	switch p.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	u.g.log.Log(ctx, level, "server log", "server", u.name, "logger", p.Logger, "data", p.Data)
}

// onMessage watches the server's notifications the client options have no
// handler for: resource updates.
func (u *upstream) onMessage(ctx context.Context, method string, req mcp.Request) {
	switch method {
	case "notifications/resources/updated":
		if p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams); ok && p != nil {
			_ = u.g.server.ResourceUpdated(context.WithoutCancel(ctx), &mcp.ResourceUpdatedNotificationParams{URI: p.URI})
		}
	}
}

// callCap returns the cap on s's tool calls in flight: the smallest of
// the gateway's MaxCallsPerServer (n, zero meaning none), s's config
// entry's "maxConcurrentCalls" and base's MaxConcurrentCalls.
func callCap(n int, s Server, base mcpadapter.ClientOptions) int {
	lower := func(m int) {
		if m > 0 && (n <= 0 || m < n) {
			n = m
		}
	}
	lower(base.MaxConcurrentCalls)
	if s.Config != nil {
		lower(s.Config.MaxConcurrentCalls)
	}
	return n
}
