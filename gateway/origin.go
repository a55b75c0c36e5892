//lint:file-ignore SA1019 the gateway relays roots, sampling and logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An origin is the client request a forwarded request serves: where the
// server's progress, log messages and questions about it go.
type origin struct {
	// key groups the origins that may be asked together: a handshake-era
	// session's id, or a key of its own for each 2026-07-28 request.
	key string
	// modern: the client speaks 2026-07-28 (it is asked through
	// input_required results, never with a request of its own).
	modern bool
	caps   *mcp.ClientCapabilities

	mu  sync.Mutex
	ctx context.Context // the client request's context (its stream)
	ss  *mcp.ServerSession
	tok any // the client's progress token, or nil
	// park, set for a 2026-07-28 client's call to a handshake-era server,
	// takes the server's questions to the client as input_required.
	park *parkedCall
}

func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newOrigin returns the origin of req, a request the gateway received.
func newOrigin(ctx context.Context, req mcp.Request) *origin {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	o := &origin{ctx: ctx, ss: ss}
	o.modern = isModern(req)
	o.caps = clientCaps(ctx, req)
	if p, ok := req.GetParams().(interface{ GetProgressToken() any }); ok {
		o.tok = p.GetProgressToken()
	}
	if !o.modern && ss != nil && ss.ID() != "" {
		o.key = "s:" + ss.ID()
	} else {
		o.key = "r:" + newKey()
	}
	return o
}

// isModern reports whether req comes from a 2026-07-28 client.
func isModern(req mcp.Request) bool {
	if r, ok := req.(interface{ ProtocolVersion() string }); ok {
		if v := r.ProtocolVersion(); v != "" {
			return v >= modernVersion
		}
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return true
	}
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= modernVersion
}

const modernVersion = "2026-07-28"

// canAsk reports whether the client can be asked what kind needs
// ("elicitation", "sampling", "roots").
func (o *origin) canAsk(kind string) bool {
	c := o.caps
	if c == nil {
		return false
	}
	switch kind {
	case "elicitation":
		return c.Elicitation != nil
	case "sampling":
		return c.Sampling != nil
	case "roots":
		return c.RootsV2 != nil || c.Roots.ListChanged
	}
	return false
}

// canAskURL reports whether the client takes URL-mode elicitations.
func (o *origin) canAskURL() bool {
	return o.caps != nil && o.caps.Elicitation != nil && o.caps.Elicitation.URL != nil
}

// asker reports whether the client can be asked anything.
func (o *origin) asker() bool { return canBeAsked(o.caps) }

// canBeAsked reports whether a client with capabilities c can be put a
// server's question (elicitation, sampling, roots).
func canBeAsked(c *mcp.ClientCapabilities) bool {
	o := &origin{caps: c}
	return o.canAsk("elicitation") || o.canAsk("sampling") || o.canAsk("roots")
}

// current returns the context and session to reach the client with now.
func (o *origin) current() (context.Context, *mcp.ServerSession) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ctx, o.ss
}

// live reports whether the client request o was made for is still open
// (a question asked with it can travel on its stream).
func (o *origin) live() bool {
	ctx, _ := o.current()
	return ctx.Err() == nil
}

// rebind points o at a new request of the same call (a 2026-07-28
// client's retry with its answers).
func (o *origin) rebind(ctx context.Context, ss *mcp.ServerSession, tok any) {
	o.mu.Lock()
	o.ctx, o.ss = ctx, ss
	if tok != nil {
		o.tok = tok
	}
	o.mu.Unlock()
}

// reqCtx returns a context for a request to the client: the client
// request's context (so that it travels on that request's stream), ended
// also when ctx (the server's request) ends.
func (o *origin) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	octx, _ := o.current()
	return withValuesOf(ctx, octx, false)
}

// errRequestAnswered is the cause a client request's context ends with
// once the gateway has answered it (route), not cancelled.
var errRequestAnswered = errors.New("the client's request was answered")

// withValuesOf returns a context with the values of vctx, a client
// request's (go-sdk writes a request to the client on the stream of the
// client request whose values it has), that ends when ctx ends and when
// vctx ends; with outlive, not when vctx ends because its request was
// answered (errRequestAnswered): what went on its stream before the
// answer has reached the client. A request cancelled (by its client, at
// its session's end) may have had its stream dropped first.
func withValuesOf(ctx, vctx context.Context, outlive bool) (context.Context, context.CancelFunc) {
	base := vctx
	if outlive {
		base = context.WithoutCancel(vctx)
	}
	rctx, cancel := context.WithCancelCause(base)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	stopV := func() bool { return true }
	if outlive {
		stopV = context.AfterFunc(vctx, func() {
			if c := context.Cause(vctx); !errors.Is(c, errRequestAnswered) {
				cancel(c)
			}
		})
	}
	end := func() { stop(); stopV(); cancel(context.Canceled) }
	if vctx.Err() != nil {
		return rctx, end // its stream is closed or going: go-sdk refuses to write
	}
	return carrierValues{rctx, vctx}, end
}

// carrierValues is a context for a request to the client that travels on
// the stream of the client request whose context is carrier (go-sdk finds
// that stream by the request's id among the context's values) while that
// request has not ended. Once it has, its stream is closed or going: the
// id is left out, and what else go-sdk writes with the context (the
// notice that the gateway withdrew its request, when the client has not
// answered it) goes on the session's standalone stream.
type carrierValues struct {
	context.Context
	carrier context.Context
}

func (c carrierValues) Value(key any) any {
	v := c.Context.Value(key)
	if _, ok := v.(jsonrpc.ID); ok && c.carrier.Err() != nil {
		return nil
	}
	return v
}

// errCannotAsk is the answer to a server's question for a client that did
// not declare the capability.
type errCannotAsk struct{ kind string }

func (e errCannotAsk) Error() string {
	return fmt.Sprintf("the client did not declare the %s capability", e.kind)
}

// ask puts one question of a server to the client: as a request of its own
// to a handshake-era client, as an input_required round to a 2026-07-28
// one. A handshake-era client's question ends with ctx and with o's
// request.
func (o *origin) ask(ctx context.Context, kind string, q mcp.InputRequest) (mcp.InputResponse, error) {
	return o.put(ctx, kind, q, false)
}

// askSession is ask for a question that may be another call's of o's
// client session (lane.attribute): a handshake-era client's question
// travels on o's request and outlives it once it is answered (the
// question may be another call's), not once it is cancelled.
func (o *origin) askSession(ctx context.Context, kind string, q mcp.InputRequest) (mcp.InputResponse, error) {
	return o.put(ctx, kind, q, true)
}

func (o *origin) put(ctx context.Context, kind string, q mcp.InputRequest, outlive bool) (mcp.InputResponse, error) {
	if !o.canAsk(kind) {
		return nil, errCannotAsk{kind}
	}
	o.mu.Lock()
	park := o.park
	o.mu.Unlock()
	if park != nil {
		return park.ask(ctx, q)
	}
	if o.modern {
		return nil, errors.New("a 2026-07-28 client is asked only through input_required results")
	}
	octx, ss := o.current()
	if ss == nil {
		return nil, errCannotAsk{kind}
	}
	rctx, cancel := withValuesOf(ctx, octx, outlive)
	defer cancel()
	switch p := q.(type) {
	case *mcp.ElicitParams:
		return ss.Elicit(rctx, p)
	case *mcp.CreateMessageParams:
		return ss.CreateMessage(rctx, p)
	case *mcp.CreateMessageWithToolsParams:
		return ss.CreateMessageWithTools(rctx, p)
	case *mcp.ListRootsParams:
		return ss.ListRoots(rctx, p)
	}
	return nil, fmt.Errorf("unknown input request %T", q)
}

// sessionQuestion returns the context of a server's question put to o's
// client session with askSession, and the function that releases it. It
// ends with ctx (the server's request), when the gateway closes, when
// the client ends its session (DELETE: endSession), and when no call of
// the session is in flight on the connection of the lane l the question
// came on: then it can belong to no call. (A session that times out has
// no call in flight; a stdio client gone ends its calls.)
func (g *Gateway) sessionQuestion(ctx context.Context, l *lane, o *origin) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	flying := l.whileFlying(o.key)
	stopFlying := context.AfterFunc(flying, func() { cancel(context.Cause(flying)) })
	stopClose := context.AfterFunc(g.ctx, func() { cancel(errClosed) })
	untrack := func() {}
	if octx, ss := o.current(); !o.modern && ss != nil && ss.ID() != "" {
		untrack = g.trackSession(ss.ID(), PrincipalFrom(octx), cancel)
	}
	return ctx, func() {
		stopFlying()
		stopClose()
		untrack()
		cancel(context.Canceled)
	}
}

// hasToken reports whether the client asked for the progress of its
// request.
func (o *origin) hasToken() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.tok != nil
}

// writeProgress writes a server's progress report to the client, with
// the client's progress token (its relay's writer: relay.go).
func (o *origin) writeProgress(p *mcp.ProgressNotificationParams) {
	o.mu.Lock()
	ctx, ss, tok := o.ctx, o.ss, o.tok
	o.mu.Unlock()
	if ss == nil || tok == nil {
		return
	}
	_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p.Progress, Total: p.Total, Message: p.Message})
}

// writeLog writes a server's log message to the client (its relay's
// writer: relay.go), at the level the client asked for: on the stream of
// the client's request while it is open, else (the gateway answered it,
// and the message of its call was handled after: lane.trailing) on the
// session's own stream, when the client has a session.
func (o *origin) writeLog(p *mcp.LoggingMessageParams) {
	ctx, ss := o.current()
	if ss == nil {
		return
	}
	if ctx.Err() == nil && ss.Log(ctx, p) == nil {
		return
	}
	if ss.ID() != "" {
		// A message related to the answered request is refused (the
		// request's stream ends with its answer, a moment before its
		// context).
		lctx, cancel := context.WithTimeout(context.Background(), lateLogWait)
		defer cancel()
		_ = ss.Log(lctx, p)
	}
}

// lateLogWait bounds the sending of a log message of an answered call to
// its client's session.
const lateLogWait = 5 * time.Second
