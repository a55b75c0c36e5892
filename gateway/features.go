//lint:file-ignore SA1019 the gateway relays roots, sampling and logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/gateway/internal/subject"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// middleware runs before go-sdk's handling of every client request: it
// puts the request's principal on the context, answers requests for tools
// the client cannot call with an error naming the ones it can, routes
// resources/read, and leaves out of listings what the Policy refuses.
// Its errors never carry the config's secrets.
func (g *Gateway) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	route := g.route(next)
	handle := func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := route(ctx, method, req)
		return res, g.red.rpcErr(err)
	}
	if g.opts.Telemetry == nil {
		return g.recoverRequests(g.leanMeta(handle))
	}
	return g.recoverRequests(g.leanMeta(g.observe(handle)))
}

func (g *Gateway) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// Close ends whatever a request is waiting for. Its context
		// ends with errRequestAnswered once it is answered (see askSession).
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(errRequestAnswered)
		stop := context.AfterFunc(g.ctx, func() { cancel(errClosed) })
		defer stop()
		if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
			ctx = withTokenInfo(ctx, ex.TokenInfo)
			if ex.Header != nil && g.exchanges.Load() {
				if hc, ok := g.httpCtx.Load(headerKey(ex.Header)); ok {
					ctx = subject.With(ctx, subject.From(hc.(*httpRequest).ctx))
				}
			}
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
			defer g.trackSession(ss.ID(), PrincipalFrom(ctx), cancel)()
			if _, fast := ctx.Value(oneRequestKey{}).(*oneRequest); !fast && !strings.HasPrefix(method, "notifications/") {
				// go-sdk's session handles it, its POST's stream open or
				// not: the session is not idle meanwhile (sessioncap.go),
				// and no call of it takes the fast path (fastsession.go).
				if g.shared != nil {
					defer g.shared.servingSession(ss.ID())()
				}
				defer g.live.handling(ss.ID())()
			}
		}
		switch method {
		case "tools/call":
			if res, err, ok := g.taskCall(ctx, req); ok {
				return res, err
			}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil && !g.search.handles(p.Name) {
				if _, ok := g.cat.tool(p.Name); !ok {
					err := g.unknownTool(ctx, p.Name)
					ss, _ := req.GetSession().(*mcp.ServerSession)
					g.audit(ctx, p.Name, ss, p.Arguments).end(ctx, nil, err)
					return nil, err
				}
			}
		case "initialize":
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				// Recorded before it is initialized: without shared
				// sessions, the idle timer (Options.SessionTimeout) is
				// the gateway's for every session go-sdk keeps. A
				// shared session's copy made here (a replay) is
				// recorded too: its calls take the fast path.
				g.live.add(ss, principalOfRequest(req))
			}
			res, err := next(ctx, method, req)
			if err == nil {
				ir, _ := res.(*mcp.InitializeResult)
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil && ir != nil {
					ss, _ := req.GetSession().(*mcp.ServerSession)
					if err := g.recordSession(ctx, req, ss, p, ir.ProtocolVersion); err != nil {
						g.log.Warn("a new session could not be recorded for the other replicas; refused", "err", err)
						if errors.Is(err, errRecordTooBig) {
							return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the initialize request is too big for the gateway to share its session among its replicas"}
						}
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway's session store is unavailable; try again"}
					}
				}
			}
			return withTasksCapability(res), err
		case "logging/setLevel":
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					g.setLogLevel(ss, string(p.Level))
					g.sessionChanged(ctx, req, ss, func(r *sessionRecord) { r.Level = string(p.Level) })
				}
			}
		case "prompts/get":
			if p, ok := req.GetParams().(*mcp.GetPromptParams); ok && p != nil {
				if _, ok := g.cat.prompt(p.Name); !ok {
					return nil, g.unknownPrompt(ctx, p.Name)
				}
			}
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			res, err := next(ctx, method, req)
			if err == nil && g.policy() != nil {
				res = g.filterList(ctx, res)
			}
			if err == nil && method == "tools/list" {
				res = g.listTaskSupport(req, res)
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

var errClosed = errors.New("the gateway closed")

// allowed asks the Policy whether the request's principal may use an item.
func (g *Gateway) allowed(ctx context.Context, server, kind, name string) bool {
	p := g.policy()
	if p == nil {
		return true
	}
	return p.Allow(ctx, PrincipalFrom(ctx), server, kind, name)
}

// policy returns the Policy in force, or nil.
func (g *Gateway) policy() Policy {
	if p := g.pol.Load(); p != nil {
		return *p
	}
	return nil
}

// Policy returns the Policy in force: Options.Policy or the last one
// SetPolicy set (nil: none).
func (g *Gateway) Policy() Policy { return g.policy() }

// SetPolicy replaces the Policy (nil: none) while clients stay connected:
// the requests that follow are decided by p, and the clients are told
// that their lists of tools, prompts and resources changed, so that they
// list them again and see what p gives them.
func (g *Gateway) SetPolicy(p Policy) {
	g.pol.Store(&p)
	g.cat.touchAll()
}

// visibleTools returns the names of the tools the request's principal sees.
func (g *Gateway) visibleTools(ctx context.Context) []string {
	if g.search.active() {
		return []string{"call_tool", "search_tools"}
	}
	var out []string
	for _, n := range g.cat.toolNames() {
		if r, ok := g.cat.tool(n); ok && g.allowed(ctx, r.u.name, "tool", r.tool.OriginalName) {
			out = append(out, n)
		}
	}
	return out
}

// filterList leaves out of a listing what the Policy refuses.
func (g *Gateway) filterList(ctx context.Context, res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		c := *r
		c.Tools = slices.DeleteFunc(slices.Clone(r.Tools), func(t *mcp.Tool) bool {
			tr, ok := g.cat.tool(t.Name)
			return ok && !g.allowed(ctx, tr.u.name, "tool", tr.tool.OriginalName)
		})
		return &c
	case *mcp.ListPromptsResult:
		c := *r
		c.Prompts = slices.DeleteFunc(slices.Clone(r.Prompts), func(p *mcp.Prompt) bool {
			pr, ok := g.cat.prompt(p.Name)
			return ok && !g.allowed(ctx, pr.u.name, "prompt", pr.name)
		})
		return &c
	case *mcp.ListResourcesResult:
		c := *r
		c.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(x *mcp.Resource) bool {
			u := g.cat.resourceOwner(x.URI)
			return u != nil && !g.allowed(ctx, u.name, "resource", x.URI)
		})
		return &c
	case *mcp.ListResourceTemplatesResult:
		c := *r
		c.ResourceTemplates = slices.DeleteFunc(slices.Clone(r.ResourceTemplates), func(x *mcp.ResourceTemplate) bool {
			u := g.cat.templateOwner(x.URITemplate)
			return u != nil && !g.allowed(ctx, u.name, "resourceTemplate", x.URITemplate)
		})
		return &c
	}
	return res
}

func (g *Gateway) unknownPrompt(ctx context.Context, name string) error {
	var known []string
	for _, n := range g.cat.promptNames() {
		if r, ok := g.cat.prompt(n); ok && g.allowed(ctx, r.u.name, "prompt", r.name) {
			known = append(known, n)
		}
	}
	msg := fmt.Sprintf("unknown prompt %q", name)
	if len(known) == 0 {
		msg += "; the gateway has no prompts now"
	} else {
		msg += "; known prompts: " + strings.Join(known, ", ")
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// promptHandler returns the handler of the prompt clients know as name.
func (g *Gateway) promptHandler(name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		release, err := g.admit(req.Session, false)
		if err != nil {
			return nil, err
		}
		defer release()
		r, ok := g.cat.prompt(name)
		if !ok || !g.allowed(ctx, r.u.name, "prompt", r.name) {
			return nil, g.unknownPrompt(ctx, name)
		}
		o := newOrigin(ctx, req)
		state, parked := unwrapState(req.Params.RequestState)
		if parked {
			return nil, errUnknownState()
		}
		params := &mcp.GetPromptParams{
			Meta:           g.forwardMeta(ctx, req, req.Params.Meta, r.u),
			Name:           r.name,
			Arguments:      req.Params.Arguments,
			InputResponses: req.Params.InputResponses,
			RequestState:   state,
		}
		for round := 0; ; round++ {
			var res *mcp.GetPromptResult
			err := r.u.do(spanned(ctx), o, true, true, func(ctx context.Context, cs *mcp.ClientSession) error {
				var err error
				res, err = cs.GetPrompt(ctx, params)
				dropServerInfo(res)
				return err
			})
			if err != nil || res == nil || !asksRound(res) {
				return res, rpcError(err)
			}
			if o.modern {
				res.RequestState = wrapState(res.RequestState)
				return res, nil
			}
			if round >= maxInputRounds {
				return nil, fmt.Errorf("server %q asked for input more than %d times in one request", r.u.name, maxInputRounds)
			}
			if params.InputResponses, err = g.fulfil(ctx, o, res.InputRequests); err != nil {
				return nil, err
			}
			params.RequestState = res.RequestState
		}
	}
}

// spanned returns ctx with a new order.Span, for a resources/read,
// prompts/get or completion/complete to note where it stands in its
// connection's messages: its log messages are its own also when handled
// after its answer (lane.trailing), and never those read before it was
// sent. The client's session returns its answer after the notifications
// read before it have been handled (they are passed on to the client
// first).
func spanned(ctx context.Context) context.Context {
	return order.WithSpan(ctx, new(order.Span))
}

// readHandler is registered with the resources and resource templates the
// gateway lists: go-sdk matches a resources/read to one of them (or answers
// that the resource is not found) and calls it.
func (g *Gateway) readHandler(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return g.read(ctx, req)
}

// setLogLevel records the level a handshake-era session asked for with
// logging/setLevel, for the requests the gateway makes to 2026-07-28
// servers on its behalf (which carry the level in their _meta), and
// forgets the levels of sessions that have ended.
func (g *Gateway) setLogLevel(ss *mcp.ServerSession, level string) {
	g.sessMu.Lock()
	defer g.sessMu.Unlock()
	live := make(map[*mcp.ServerSession]bool)
	for s := range g.server.Sessions() {
		live[s] = true
	}
	for s := range g.levels {
		if !live[s] {
			delete(g.levels, s)
		}
	}
	g.levels[ss] = level
}

// logLevel returns the level a session asked for, or "".
func (g *Gateway) logLevel(ss *mcp.ServerSession) string {
	g.sessMu.Lock()
	defer g.sessMu.Unlock()
	return g.levels[ss]
}

// read forwards a resources/read to the server that lists the URI, or
// whose template matches it.
func (g *Gateway) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	release, err := g.admit(req.Session, false)
	if err != nil {
		return nil, err
	}
	defer release()
	if req.Params == nil || req.Params.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: $.uri is missing"}
	}
	uri := req.Params.URI
	u := g.cat.resourceOwner(uri)
	if u == nil {
		if rs := g.cat.resourceServers(); len(rs) == 1 {
			u = rs[0] // the only server with resources may serve URIs it does not list
		}
	}
	if u == nil || !g.allowed(ctx, u.name, "resource", uri) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	o := newOrigin(ctx, req)
	state, parked := unwrapState(req.Params.RequestState)
	if parked {
		return nil, errUnknownState()
	}
	params := &mcp.ReadResourceParams{Meta: g.forwardMeta(ctx, req, req.Params.Meta, u), URI: uri, InputResponses: req.Params.InputResponses, RequestState: state}
	for round := 0; ; round++ {
		var res *mcp.ReadResourceResult
		err := u.do(spanned(ctx), o, true, true, func(ctx context.Context, cs *mcp.ClientSession) error {
			var err error
			res, err = cs.ReadResource(ctx, params)
			dropServerInfo(res)
			return err
		})
		if err != nil || res == nil || !asksRound(res) {
			return res, rpcError(err)
		}
		if o.modern {
			res.RequestState = wrapState(res.RequestState)
			return res, nil
		}
		if round >= maxInputRounds {
			return nil, fmt.Errorf("server %q asked for input more than %d times in one request", u.name, maxInputRounds)
		}
		if params.InputResponses, err = g.fulfil(ctx, o, res.InputRequests); err != nil {
			return nil, err
		}
		params.RequestState = res.RequestState
	}
}

// complete forwards completion/complete to the server of the prompt or
// resource template it is about.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	release, err := g.admit(req.Session, false)
	if err != nil {
		return nil, err
	}
	defer release()
	if req.Params == nil || req.Params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: $.ref is missing"}
	}
	params := *req.Params
	ref := *req.Params.Ref
	params.Ref = &ref
	var u *upstream
	switch ref.Type {
	case "ref/prompt":
		r, ok := g.cat.prompt(ref.Name)
		if !ok || !g.allowed(ctx, r.u.name, "prompt", r.name) {
			return nil, g.unknownPrompt(ctx, ref.Name)
		}
		u, ref.Name = r.u, r.name
	case "ref/resource":
		if u = g.cat.templateOwner(ref.URI); u == nil {
			u = g.cat.resourceOwner(ref.URI)
		}
		if u == nil || !g.allowed(ctx, u.name, "resourceTemplate", ref.URI) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: $.ref.uri: no server offers %q", ref.URI)}
		}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: $.ref.type is %q: want \"ref/prompt\" or \"ref/resource\"", ref.Type)}
	}
	params.Meta = g.forwardMeta(ctx, req, req.Params.Meta, u)
	var res *mcp.CompleteResult
	err = u.do(spanned(ctx), newOrigin(ctx, req), true, true, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = cs.Complete(ctx, &params)
		dropServerInfo(res)
		return err
	})
	return res, rpcError(err)
}

// subscribe and unsubscribe keep one subscription per resource at its
// server while any client session is subscribed to it (go-sdk tells each
// of them of the updates).
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	u := g.cat.resourceOwner(uri)
	if u == nil || !g.allowed(ctx, u.name, "resource", uri) {
		return mcp.ResourceNotFoundError(uri)
	}
	if !u.setSubscribed(uri, req.Session, policyContext(ctx)) {
		return nil
	}
	err := u.do(ctx, newOrigin(ctx, req), true, false, func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		u.setSubscribed(uri, req.Session, nil)
	} else {
		g.sessionChanged(ctx, req, req.Session, func(r *sessionRecord) {
			if !slices.Contains(r.Subs, uri) && len(r.Subs) < maxSharedSubs {
				r.Subs = append(r.Subs, uri)
			}
		})
	}
	return rpcError(err)
}

// policyContext returns a context that holds only whom ctx's request is
// for (its principal and token), for asking the Policy about it later.
func policyContext(ctx context.Context) context.Context {
	c := context.Background()
	if ti := TokenInfoFrom(ctx); ti != nil {
		c = context.WithValue(c, tokenInfoKey{}, ti)
	}
	return withPrincipal(c, PrincipalFrom(ctx))
}

// filterSent is the gateway server's sending middleware: with a Policy in
// force, a resource's update reaches a client session only while the
// policy lets whom it subscribed for see the resource (a policy changed
// since the subscription is obeyed), and not at all when the server that
// has the resource now does not know the session's subscription (one made
// at a server a reload replaced or removed: whom it was for is unknown).
//
// A progress report or log message for a request answered on a fast path
// (fastpath.go, fastsession.go), sent with the context of its call
// (origin.writeProgress, writeLog: the relay's writer), goes on that
// request's HTTP response, which the fast path writes (fastConn.writeNote)
// where go-sdk's transport would write it: go-sdk's transport does not
// know the request. go-sdk's ServerSession.Log has applied the client's
// log level by then.
func (g *Gateway) filterSent(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "notifications/resources/updated":
			if g.policy() != nil && !g.safeUpdateAllowed(req) {
				return nil, nil
			}
		case "notifications/progress", "notifications/message":
			if one, ok := ctx.Value(oneRequestKey{}).(*oneRequest); ok && one.stream != nil {
				return nil, one.stream.writeNote(method, req.GetParams())
			}
		}
		return next(ctx, method, req)
	}
}

// safeUpdateAllowed is updateAllowed on a server's goroutine: a panic of
// the Policy is logged and the update not sent.
func (g *Gateway) safeUpdateAllowed(req mcp.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			g.logPanic(p, "the Policy, for a resource update")
			ok = false
		}
	}()
	return g.updateAllowed(req)
}

// updateAllowed reports whether the Policy lets the client session req is
// sent to have req's resource update, as filterSent says.
func (g *Gateway) updateAllowed(req mcp.Request) bool {
	p, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if p == nil || ss == nil {
		return false
	}
	u := g.cat.resourceOwner(p.URI)
	if u == nil {
		return false
	}
	whom, ok := u.subscriber(p.URI, ss)
	return ok && g.allowed(whom, u.name, "resource", p.URI)
}

func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	u := g.cat.resourceOwner(uri)
	g.sessionChanged(ctx, req, req.Session, func(r *sessionRecord) {
		r.Subs = slices.DeleteFunc(r.Subs, func(s string) bool { return s == uri })
	})
	if u == nil || !u.setSubscribed(uri, req.Session, nil) {
		return nil
	}
	return rpcError(u.do(ctx, newOrigin(ctx, req), true, false, func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	}))
}
