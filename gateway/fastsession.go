package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handshake-era session's POST of one plain tools/call is answered on a
// fast path of its own: the gateway reads the request once, calls its
// receiving middleware itself over the session's go-sdk ServerSession (as
// a 2026-07-28 direct call does: direct.go), and writes the answer as one
// SSE event. go-sdk's streamable handler would read the body into a
// stream of the session, decode the request three more times (each time
// with a new 32 KB decoder) and run the call on goroutines of its own.
//
// The rule, decided by sessionFastRequestOf: a request takes this path
// when all of these hold, and goes to go-sdk's handler (its body put back)
// otherwise:
//
//   - the fast path is on (Options.slowPathOnly unset) and the gateway
//     keeps its sessions in this process (no Options.Sessions);
//   - it is a POST naming, in Mcp-Session-Id, an initialized session of
//     this gateway, made by the request's principal (go-sdk answers
//     another principal's request with 403), with an Mcp-Protocol-Version
//     header of 2025-06-18 or 2025-11-25 and no Last-Event-ID header;
//   - its Content-Type is application/json and its Accept takes both
//     application/json and text/event-stream;
//   - its body is one JSON-RPC tools/call request as readEnvelope reads
//     it, whose params hold only name, arguments and _meta, read as
//     go-sdk reads them, naming a tool go-sdk's registry holds; its _meta
//     holds no progress token (progress travels on the request's stream)
//     and no member named io.modelcontextprotocol/… (go-sdk reads a
//     protocol version there as a 2026-07-28 request's);
//   - the session asked for no log messages (logging/setLevel: they
//     travel on the request's stream);
//   - a client that can be asked (elicitation, sampling, roots) has its
//     session's standalone stream (GET) open: a question a server puts to
//     a call on this path travels there (go-sdk's session sends what it
//     cannot tie to a request of its own on that stream);
//   - no call on this path with the same id is in flight in the session.
//
// What differs from go-sdk's handler, for such a call: the answer's event
// has no id and no priming event goes before it, so its stream cannot be
// resumed (Last-Event-ID); a client that loses the stream loses the
// answer, as with an answer written as JSON. A disconnection does not
// cancel the call (it does not on go-sdk's path either); the call ends
// with a notifications/cancelled naming it (cancelSessionFast), with its
// session (DELETE), or when the gateway closes.

// sessionFastVersions are the handshake-era protocol versions a request
// on the session fast path may name.
var sessionFastVersions = []string{"2025-06-18", "2025-11-25"}

// errCancelledByClient ends a call on the session fast path that its
// client cancelled (notifications/cancelled).
var errCancelledByClient = errors.New("the client cancelled the request")

// liveSessions are the handshake-era sessions of a gateway without shared
// sessions, by id, for the session fast path. They also end the sessions
// idle for Options.SessionTimeout, as go-sdk's handler would (it is given
// none): a session's idle time starts when its last POST, on either path,
// has been answered. (go-sdk closes a session whose initialize failed;
// every other session is here.)
type liveSessions struct {
	timeout time.Duration // Options.SessionTimeout

	mu     sync.Mutex
	closed bool
	by     map[string]*liveSession
}

// liveSession is a session the session fast path may serve.
type liveSession struct {
	ss        *mcp.ServerSession
	principal string // the UserID of the token its initialize came with

	// Guarded by liveSessions.mu.
	streams int                                    // standalone streams (GET) being served
	calls   map[jsonrpc.ID]context.CancelCauseFunc // calls on the fast path in flight
	posts   int                                    // POSTs being served
	idle    *time.Timer                            // closes ss once idle for timeout; nil: never
}

// add records ss, made by principal, until it ends; the goroutine waiting
// for its end is owned by the session, which Gateway.Close closes. Once
// the gateway is closing (shut), ss is not recorded.
func (l *liveSessions) add(ss *mcp.ServerSession, principal string, wg *sync.WaitGroup) {
	id := ss.ID()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || id == "" || l.by[id] != nil {
		return
	}
	if l.by == nil {
		l.by = make(map[string]*liveSession)
	}
	ls := &liveSession{ss: ss, principal: principal}
	if l.timeout > 0 {
		ls.idle = time.AfterFunc(l.timeout, func() { _ = ss.Close() })
	}
	l.by[id] = ls
	wg.Go(func() {
		_ = ss.Wait()
		l.mu.Lock()
		if l.by[id] == ls {
			delete(l.by, id)
		}
		if ls.idle != nil {
			ls.idle.Stop()
		}
		l.mu.Unlock()
	})
}

// post counts a POST of session id, made by principal, until the
// returned function is called: the session is not idle meanwhile.
func (l *liveSessions) post(id, principal string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.by[id]
	if ls == nil || ls.principal != principal || ls.idle == nil {
		return func() {}
	}
	if ls.posts++; ls.posts == 1 {
		ls.idle.Stop()
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if ls.posts--; ls.posts == 0 && l.by[id] == ls {
			ls.idle.Reset(l.timeout)
		}
	}
}

// drop forgets session id when principal made it (its client ended it:
// DELETE), so that no request of it takes the fast path while go-sdk
// closes it.
func (l *liveSessions) drop(id, principal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.by[id]; ls != nil && ls.principal == principal {
		delete(l.by, id)
		if ls.idle != nil {
			ls.idle.Stop()
		}
	}
}

// shut stops recording sessions.
func (l *liveSessions) shut() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// get returns session id, made by principal, or nil.
func (l *liveSessions) get(id, principal string) *liveSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.by[id]; ls != nil && ls.principal == principal {
		return ls
	}
	return nil
}

// stream counts a standalone stream of session id, made by principal,
// until the returned function is called.
func (l *liveSessions) stream(id, principal string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.by[id]
	if ls == nil || ls.principal != principal {
		return func() {}
	}
	ls.streams++
	return func() {
		l.mu.Lock()
		ls.streams--
		l.mu.Unlock()
	}
}

// streaming reports whether ls has a standalone stream being served.
func (l *liveSessions) streaming(ls *liveSession) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ls.streams > 0
}

// start records a call with id on the fast path in ls until the returned
// function is called; ok is false when one with that id is in flight.
func (l *liveSessions) start(ls *liveSession, id jsonrpc.ID, cancel context.CancelCauseFunc) (done func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := ls.calls[id]; dup {
		return nil, false
	}
	if ls.calls == nil {
		ls.calls = make(map[jsonrpc.ID]context.CancelCauseFunc)
	}
	ls.calls[id] = cancel
	return func() {
		l.mu.Lock()
		delete(ls.calls, id)
		l.mu.Unlock()
	}, true
}

// cancel cancels the call with id on the fast path in ls, if one is in
// flight.
func (l *liveSessions) cancel(ls *liveSession, id jsonrpc.ID) {
	l.mu.Lock()
	cancel := ls.calls[id]
	l.mu.Unlock()
	if cancel != nil {
		cancel(errCancelledByClient)
	}
}

// calling reports whether ls has calls on the fast path in flight.
func (l *liveSessions) calling(ls *liveSession) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(ls.calls) > 0
}

// serveSessionFast answers r on the session fast path when r takes it,
// reporting whether it did; when it did not, r (its body put back) is for
// go-sdk's handler.
func (g *Gateway) serveSessionFast(w http.ResponseWriter, r *http.Request) bool {
	id := r.Header.Get("Mcp-Session-Id")
	if g.opts.slowPathOnly || r.Method != http.MethodPost || id == "" || r.Body == nil {
		return false
	}
	ls := g.live.get(id, principalOf(r))
	if ls == nil {
		return false
	}
	if g.live.calling(ls) {
		g.cancelSessionFast(r, ls)
	}
	f := g.sessionFastRequestOf(r, ls)
	if f == nil {
		return false
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	done, ok := g.live.start(ls, f.msg.ID, cancel)
	if !ok {
		return false
	}
	defer done()
	g.answerSessionFast(ctx, w, f, ls.ss)
	g.sessionFast.Add(1)
	return true
}

// sessionFastRequestOf returns r, a POST of session ls, as a fastRequest
// whose call is direct, or nil when r does not take the session fast path
// (see the rule above). It may read r's body and puts it back.
func (g *Gateway) sessionFastRequestOf(r *http.Request, ls *liveSession) *fastRequest {
	if g.shared != nil {
		return nil
	}
	h := r.Header
	v := h.Get("Mcp-Protocol-Version")
	if !slices.Contains(sessionFastVersions, v) || len(h.Values("Last-Event-ID")) > 0 {
		return nil
	}
	if ct, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || ct != "application/json" {
		return nil
	}
	if !acceptsBoth(h.Values("Accept")) {
		return nil
	}
	ip := ls.ss.InitializeParams()
	if ip == nil || g.logLevel(ls.ss) != "" || (canBeAsked(ip.Capabilities) && !g.live.streaming(ls)) {
		return nil
	}
	body, ok := g.readBody(r)
	if !ok {
		return nil
	}
	f := parseFast(body)
	if f == nil || !f.plain || !g.cat.isRegistered(f.name) {
		return nil
	}
	for k := range f.meta {
		if k == "progressToken" || strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return nil
		}
	}
	p, ok := decodeAsSDK[mcp.CallToolParamsRaw](f.msg.Params)
	if !ok || p.Name != f.name {
		return nil
	}
	f.r, f.header, f.call = r, v, p
	return f
}

// answerSessionFast answers f's call on session ss in ctx, writing the
// answer to w as one SSE event. The receiving middleware ends the call
// when the gateway closes (route) and when the client ends its session
// (trackSession).
func (g *Gateway) answerSessionFast(ctx context.Context, w http.ResponseWriter, f *fastRequest, ss *mcp.ServerSession) {
	f.msg.Extra = &mcp.RequestExtra{
		TokenInfo:      auth.TokenInfoFromContext(f.r.Context()),
		Header:         f.r.Header,
		CloseSSEStream: func(mcp.CloseSSEStreamArgs) {}, // the answer is the stream's one event
	}
	one := &oneRequest{}
	ctx = context.WithValue(ctx, oneRequestKey{}, one)
	c := &fastConn{req: f.msg, direct: true, session: true, httpCtx: ctx, w: w, closed: make(chan struct{}), answered: make(chan struct{})}
	g.answerDirect(ctx, c, ss, f, one)
}

// cancelSessionFast cancels the calls on the session fast path in ls that
// r, a POST of that session, cancels (notifications/cancelled, alone or
// in a batch); r then goes on as it would (its body put back).
func (g *Gateway) cancelSessionFast(r *http.Request, ls *liveSession) {
	body, ok := g.readBody(r)
	if !ok || !bytes.Contains(body, []byte("notifications/cancelled")) {
		return
	}
	type note struct {
		Method string `json:"method"`
		Params *struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	var notes []note
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &notes) != nil {
			return
		}
	} else {
		var n note
		if json.Unmarshal(b, &n) != nil {
			return
		}
		notes = append(notes, n)
	}
	for _, n := range notes {
		if n.Method != "notifications/cancelled" || n.Params == nil {
			continue
		}
		if id, err := jsonrpc.MakeID(n.Params.RequestID); err == nil && id.IsValid() {
			g.live.cancel(ls, id)
		}
	}
}

// principalOfRequest returns the principal req came with (the UserID of
// its token), as go-sdk's handler records a session's.
func principalOfRequest(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		return ex.TokenInfo.UserID
	}
	return ""
}
