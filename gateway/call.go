//lint:file-ignore SA1019 the gateway relays roots, sampling and logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolHandler returns the handler of the tool clients know as name.
func (g *Gateway) toolHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if g.search.handles(name) {
			return g.search.call(ctx, name, req)
		}
		return g.callTool(ctx, name, req, req.Params.Arguments)
	}
}

// admit counts a request in flight for Shutdown and, for a tool call of a
// handshake-era session, against the session's cap; release undoes it.
// While the gateway shuts down it refuses new requests.
func (g *Gateway) admit(ss *mcp.ServerSession, call bool) (release func(), err error) {
	if g.draining.Load() {
		return nil, errShuttingDown()
	}
	return g.admitAlways(ss, call)
}

// admitAlways is admit for a request that continues one in flight (a
// client's answers to a parked call's questions): it is taken while the
// gateway shuts down.
func (g *Gateway) admitAlways(ss *mcp.ServerSession, call bool) (release func(), err error) {
	done := g.track()
	max := g.opts.maxCallsPerSession()
	if !call || ss == nil || max <= 0 {
		return done, nil
	}
	g.sessMu.Lock()
	n := g.sessions[ss]
	if n == nil {
		n = new(int)
		g.sessions[ss] = n
	}
	if *n >= max {
		g.sessMu.Unlock()
		done()
		return nil, &jsonrpc.Error{Code: CodeTooManyCalls, Message: fmt.Sprintf("this session has %d tool calls in flight, the most the gateway allows (MaxCallsPerSession); wait for one to end", max)}
	}
	*n++
	g.sessMu.Unlock()
	return func() {
		g.sessMu.Lock()
		if *n--; *n <= 0 {
			delete(g.sessions, ss)
		}
		g.sessMu.Unlock()
		done()
	}, nil
}

// track counts a request in flight for Shutdown until the returned
// function is called.
func (g *Gateway) track() (done func()) {
	g.inflight.Add(1)
	g.nflight.Add(1)
	return func() {
		g.nflight.Add(-1)
		g.inflight.Done()
	}
}

func errShuttingDown() *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeShuttingDown, Message: "the gateway is shutting down; try another instance or try again later"}
}

// inflightCount returns how many forwarded requests are in flight.
func (g *Gateway) inflightCount() int64 { return g.nflight.Load() }

// callTool forwards a call of the tool clients know as name, with args.
func (g *Gateway) callTool(ctx context.Context, name string, req *mcp.CallToolRequest, args json.RawMessage) (res *mcp.CallToolResult, err error) {
	audit := g.audit(ctx, name, req.Session, args)
	defer func() { audit.end(ctx, res, err) }()
	state, parked := unwrapState(req.Params.RequestState)
	admit := g.admit
	if parked {
		admit = g.admitAlways
	}
	release, err := admit(req.Session, true)
	if err != nil {
		return nil, err
	}
	defer release()
	r, ok := g.cat.tool(name)
	if !ok || !g.allowed(ctx, r.u.name, "tool", r.tool.OriginalName) {
		if parked {
			// A call the Policy let start and now refuses ends here.
			g.parks.refuse(state, PrincipalFrom(ctx), name)
		}
		return nil, g.unknownTool(ctx, name)
	}
	audit.found(r.u.name, r.tool.OriginalName)
	u := r.u
	o := newOrigin(ctx, req)
	if parked && state == signInState {
		// The retry of a sign-in question (signInAnswer): the call
		// again, unless the user declined.
		if res := signInDeclined(u.name, req.Params.InputResponses); res != nil {
			return res, nil
		}
		parked, state = false, ""
		req.Params.InputResponses = nil
	}
	if parked {
		// The parked call holds its slot on the server: the answers to
		// its questions are no new call. They go back to the tool they
		// were asked for, as it is named now, or nowhere.
		p := g.parks.take(state, PrincipalFrom(ctx), name)
		if p == nil {
			return nil, errUnknownState()
		}
		p.o.rebind(ctx, req.Session, o.tok)
		return g.parks.resume(ctx, p, req.Params.InputResponses)
	}
	if err := checkArgs(args); err != nil {
		return nil, err
	}
	free, err := g.quota.admit(ctx, PrincipalFrom(ctx), u.name, r.tool.OriginalName)
	if err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{
		Name:           r.tool.OriginalName,
		Arguments:      json.RawMessage(r.tool.ServerArguments(args)),
		Meta:           g.forwardMeta(ctx, req, req.Params.Meta, u),
		InputResponses: req.Params.InputResponses,
		RequestState:   state,
	}
	asked := false // the result is the gateway's sign-in question
	call := func(ctx context.Context) (*mcp.CallToolResult, error) {
		for round := 1; ; round++ {
			res, err := g.forwardCall(ctx, r, o, params)
			var sn *signInNeeded
			if !errors.As(err, &sn) {
				return res, err
			}
			if round > maxSignInRounds || !g.canAskSignInMidCall(o) {
				asked = true
				return g.signInAnswer(o, u, sn.sr, true)
			}
			// Asked mid-call; made again once the user signed in. The
			// wait holds no slot of the Limits' caps (another
			// principal's call may take it): the call takes its slots
			// again after it.
			free()
			free = func() {}
			res, err = g.signInMidCall(ctx, o, u, sn.sr)
			if askedNot(err) {
				asked = true
				return g.signInAnswer(o, u, sn.sr, true)
			}
			if res != nil || err != nil {
				return res, err
			}
			if free, err = g.quota.slots(ctx, PrincipalFrom(ctx), u.name, r.tool.OriginalName); err != nil {
				free = func() {}
				return nil, err
			}
		}
	}
	if o.modern && !u.isModern() && o.asker() {
		// The server may ask mid-call: run the call parked, so that a
		// question can go back to the client as input_required.
		// It counts as in flight (Shutdown waits for it) until it ends,
		// also while the client holds its questions; so does its slot
		// on the server, which the server's client holds for the call.
		done := g.track()
		return g.parks.wait(ctx, g.parks.start(ctx, o, name, g.recoverCall(func(ctx context.Context) (*mcp.CallToolResult, error) {
			defer done()
			defer func() { free() }()
			return call(ctx)
		})))
	}
	defer func() { free() }()
	res, err = call(ctx)
	for round := 1; err == nil && res != nil && asksRound(res); round++ {
		if asked {
			return res, nil // the gateway's own question (signInAnswer)
		}
		if o.modern {
			res.RequestState = wrapState(res.RequestState)
			return res, nil
		}
		// A handshake-era client: ask it each question, then retry.
		if round > maxInputRounds {
			return nil, fmt.Errorf("server %q asked for input more than %d times in one call", u.name, maxInputRounds)
		}
		responses, ferr := g.fulfil(ctx, o, res.InputRequests)
		if ferr != nil {
			return nil, ferr
		}
		params.InputResponses, params.RequestState = responses, res.RequestState
		res, err = call(ctx)
	}
	return res, err
}

// forwardCall sends one tools/call to r's server for o through the
// server's client (mcpadapter's Tool.RelayCall), which bounds it by the
// server's limits (its timeouts, its tools' timeouts, its cap on calls in
// flight) and takes the connection's fast path when the call is plain. A
// progress token of the client's goes with the call when o asked for
// progress or CallTimeout (restarted by each progress report) needs it.
func (g *Gateway) forwardCall(ctx context.Context, r toolRoute, o *origin, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	u := r.u
	if up, _, err := u.status(); !up {
		return nil, rpcError(&unavailableError{server: u.name, err: err})
	}
	opts := &mcpadapter.CallOptions{}
	var touch func()
	if d := g.opts.CallTimeout; d > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		watch := newProgressWatch(d, func() {
			cancel(&timeoutError{server: u.name, tool: params.Name, after: d})
		})
		defer watch.stop()
		touch = watch.touch
	}
	if o.hasToken() || touch != nil {
		opts.Progress = func(p mcpadapter.Progress) {
			if touch != nil {
				touch()
			}
			g.relays.progress(o, &mcp.ProgressNotificationParams{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	ctx, err := u.as(ctx)
	if err != nil {
		return nil, err
	}
	// The client's session notes in the span where the call stands in
	// its connection's messages: its log messages read before its answer
	// stay its own after it left (lane.trailing); and its connection
	// numbers its event streams, whose log messages are its own.
	ctx = placed(ctx)
	c, leave, err := u.fly(ctx, o, true)
	if err != nil {
		return nil, callError(u, params.Name, context.Cause(ctx), err)
	}
	free, err := u.callSlot(ctx)
	if err == nil {
		if err = u.gone(); err != nil { // removed while the call waited
			free()
		}
	}
	if err != nil {
		leave()
		return nil, callError(u, params.Name, context.Cause(ctx), err)
	}
	// The server's progress and log messages sent before its answer
	// have been handled (put in the relay of o's client session, while
	// the call is in flight for attribution) when RelayCallVia returns:
	// the client's connection waits for them (internal/order). The relay
	// has written them to the client when flush returns (bounded by the
	// call's context), so they reach it before the answer.
	res, err := r.tool.RelayCallVia(ctx, c, params, opts)
	free()
	leave()
	g.relays.flush(ctx, o)
	if sr := signInOf(err); sr != nil && u.web != nil {
		return nil, &signInNeeded{sr} // callTool asks (signInAnswer)
	}
	if err != nil && u.web != nil {
		g.log.Warn("a call to a server with a sign-in per user failed", "server", u.name, "principal", PrincipalFrom(ctx), "err", err)
	}
	if err != nil {
		return nil, callError(u, params.Name, context.Cause(ctx), err)
	}
	dropServerInfo(res)
	return res, nil
}

// dropServerInfo takes the server's name for itself out of a result's
// _meta (io.modelcontextprotocol/serverInfo): the gateway is the server
// its clients talk to, and names itself there (as go-sdk does for a
// 2026-07-28 request), never a server behind it.
func dropServerInfo(res mcp.Result) {
	if res == nil || reflect.ValueOf(res).IsNil() {
		return
	}
	if m := res.GetMeta(); m != nil {
		if _, ok := m[mcp.MetaKeyServerInfo]; ok {
			delete(m, mcp.MetaKeyServerInfo)
			res.SetMeta(m)
		}
	}
}

// callError returns the error a client gets for a forwarded call of tool
// that failed with err, its context ended by cause (or not, nil): a time
// limit named with where it was set, the server's own error as it is.
func callError(u *upstream, tool string, cause, err error) error {
	var gte *timeoutError
	if errors.As(cause, &gte) {
		return gte.rpc()
	}
	var te *mcpadapter.TimeoutError
	if errors.As(err, &te) {
		return (&timeoutError{server: u.name, tool: tool, after: te.Limit, setting: te.Setting,
			total: te.Kind == mcpadapter.TimeoutTotal, absolute: te.Kind == mcpadapter.TimeoutRequest}).rpc()
	}
	return rpcError(u.wrapErr(err))
}

// acquire takes a place in sem (nil: no cap) until free is called, or
// returns ctx's cause.
func acquire(ctx context.Context, sem chan struct{}) (free func(), _ error) {
	if sem == nil {
		return func() {}, nil
	}
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// checkArgs refuses arguments that are not one JSON object, naming why.
func checkArgs(args json.RawMessage) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	if i := skipSpace(args, 0); i < len(args) && args[i] == '{' && json.Valid(args) {
		return nil // an object, read without building it
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: $.arguments must be a JSON object: " + err.Error()}
	}
	return nil
}

// forwardMeta returns the _meta of a client's request to send on to u: the
// client's own entries (trace context, say), without those that belong to
// one hop (the protocol version, client info and capabilities, which the
// gateway's client sets) and without the progress token (the server's
// client sets one of its own when the call's progress is wanted). A
// 2026-07-28 server gets the client's log level: from the request's _meta,
// or the level a handshake-era session set. With Options.Telemetry the
// trace context is that of ctx (the gateway's operation) alone: the
// client's traceparent, tracestate and baggage are left out, and only
// what the telemetry writes is sent (a client's tracestate beside the
// operation's traceparent would be another trace's, or one the gateway
// could not read).
func (g *Gateway) forwardMeta(ctx context.Context, req mcp.Request, m mcp.Meta, u *upstream) mcp.Meta {
	modern := u.isModern()
	t := g.opts.Telemetry
	out := make(mcp.Meta, len(m)+1)
	for k, v := range m {
		switch k {
		case "progressToken", mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeySubscriptionID:
			continue
		case mcp.MetaKeyLogLevel:
			if !modern {
				continue
			}
		case "traceparent", "tracestate", "baggage":
			if t != nil {
				continue
			}
		}
		out[k] = v
	}
	if modern {
		// The server learns what the client can be asked, not what the
		// gateway could relay.
		if c := g.capsForward(ctx, req); c != nil {
			out[mcp.MetaKeyClientCapabilities] = c
		}
	}
	if _, ok := out[mcp.MetaKeyLogLevel]; modern && !ok {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			if l := g.logLevel(ss); l != "" {
				out[mcp.MetaKeyLogLevel] = l
			}
		}
	}
	if t != nil {
		t.InjectMeta(ctx, out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// capsForward returns the capabilities of the client of req, handled in
// ctx, as forwardMeta sends them (capsMeta), or nil. Those of a lean
// one-request session (lean.go) are encoded as the _meta's encoding
// writes capsMeta's map once per capabilities the clients write (the
// last ones are kept, by their bytes): the clients of a gateway mostly
// write the same.
func (g *Gateway) capsForward(ctx context.Context, req mcp.Request) any {
	c := clientCaps(ctx, req)
	one, _ := ctx.Value(oneRequestKey{}).(*oneRequest)
	raw := one.capsJSON(c)
	if raw == nil {
		return g.sessionCaps(c)
	}
	return g.encodedCaps(raw, c)
}

// sessionCaps returns c, a client's capabilities not read from a lean
// request's _meta (a handshake-era session's, say), as forwardMeta sends
// them: capsMeta's map encoded as encodedCaps encodes it, once per
// capabilities (the last ones are kept, by their address: a session's
// stay the same).
func (g *Gateway) sessionCaps(c *mcp.ClientCapabilities) any {
	if c != nil {
		if e := g.capsByAddr.Load(); e != nil && e.c == c {
			return e.enc
		}
	}
	enc, v := encodeCapsMeta(c)
	if enc != nil && c != nil {
		g.capsByAddr.Store(&capsAt{c: c, enc: enc})
	}
	return v
}

// capsAt is a client's capabilities (c) as forwardMeta sends them (enc).
type capsAt struct {
	c   *mcp.ClientCapabilities
	enc json.RawMessage
}

// encodedCaps returns c, a client's capabilities its request's _meta
// wrote as raw, as forwardMeta sends them: capsMeta's map encoded as the
// _meta's encoding writes it.
func (g *Gateway) encodedCaps(raw []byte, c *mcp.ClientCapabilities) any {
	if e := g.capsMemo.Load(); e != nil && bytes.Equal(e.raw, raw) {
		return e.enc
	}
	enc, v := encodeCapsMeta(c)
	if enc != nil {
		g.capsMemo.Store(&capsEncoded{raw: bytes.Clone(raw), enc: enc})
	}
	return v
}

// encodeCapsMeta returns capsMeta(c) encoded as the _meta's encoding
// writes it, and what forwardMeta sends: that encoding, or capsMeta's map
// when it cannot be encoded (nil when there is none).
func encodeCapsMeta(c *mcp.ClientCapabilities) (json.RawMessage, any) {
	m := capsMeta(c)
	if m == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return nil, m
	}
	data := json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n"))
	return data, data
}

// capsEncoded is a client's capabilities as a request's _meta wrote them
// (raw) and as forwardMeta sends them (enc).
type capsEncoded struct {
	raw []byte
	enc json.RawMessage
}

// capsMeta returns client capabilities as the _meta of a 2026-07-28
// request carries them (roots as an object, present only when declared).
func capsMeta(c *mcp.ClientCapabilities) map[string]any {
	if c == nil {
		c = &mcp.ClientCapabilities{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	delete(m, "roots")
	switch {
	case c.RootsV2 != nil:
		m["roots"] = c.RootsV2
	case c.Roots.ListChanged:
		m["roots"] = &c.Roots
	}
	return m
}

// progressWatch fires when no progress came for a while.
type progressWatch struct {
	mu    sync.Mutex
	timer *time.Timer
	d     time.Duration
}

func newProgressWatch(d time.Duration, fire func()) *progressWatch {
	return &progressWatch{timer: time.AfterFunc(d, fire), d: d}
}

func (w *progressWatch) touch() {
	w.mu.Lock()
	if w.timer.Stop() {
		w.timer.Reset(w.d)
	}
	w.mu.Unlock()
}

func (w *progressWatch) stop() {
	w.mu.Lock()
	w.timer.Stop()
	w.mu.Unlock()
}
