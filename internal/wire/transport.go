package wire

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ObservedTransport reports every message of an mcp.Transport's
// connections to an Observer, and hands each request tracked with
// RequestStatus.KeepResult the raw result of its response. It must not
// wrap go-sdk's streamable HTTP transport, whose connection has hidden
// methods go-sdk relies on; HTTP is observed by a Tap instead.
type ObservedTransport struct {
	Inner    mcp.Transport // the transport observed
	Observer *Observer     // sees every message; nil sees none
}

// Connect connects the inner transport and observes the connection.
func (t *ObservedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &observedConn{Connection: c, obs: t.Observer}, nil
}

type observedConn struct {
	mcp.Connection
	obs   *Observer
	calls pendingCalls
}

func (c *observedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.obs.Received(m, nil)
		c.calls.received(m)
	}
	return m, err
}

// Write sends m. A failed write is not marked as undelivered: over SSE the
// POST may fail after the server took the message (a proxy's 502), and a
// request must not run twice; the HTTP tap marks the failures that are
// certain.
func (c *observedConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.obs.Sent(m, nil)
	c.calls.sending(ctx, m)
	if written := watchMessage(ctx, m); written != nil {
		defer written()
	}
	return c.Connection.Write(ctx, m)
}

// pendingCalls hands the responses of one connection to the tracked
// requests awaiting them, by JSON-RPC id. go-sdk writes a request with
// its caller's context, which carries the RequestStatus; the response
// comes back on the connection's reading goroutine, before go-sdk passes
// it to the caller.
type pendingCalls struct {
	n  atomic.Int32 // len(m), read without mu
	mu sync.Mutex
	m  map[jsonrpc.ID]*RequestStatus
}

// sending registers msg, when it is a request whose context asks for its
// result.
func (p *pendingCalls) sending(ctx context.Context, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	rs := requestStatus(ctx)
	if !rs.keeps(req.Method) {
		return
	}
	id := req.ID
	rs.sent(id, func() { p.drop(id, rs) })
	p.mu.Lock()
	if p.m == nil {
		p.m = make(map[jsonrpc.ID]*RequestStatus)
	}
	p.m[id] = rs
	p.n.Store(int32(len(p.m)))
	p.mu.Unlock()
}

// drop stops waiting for the response to id.
func (p *pendingCalls) drop(id jsonrpc.ID, rs *RequestStatus) {
	p.mu.Lock()
	if p.m[id] == rs {
		delete(p.m, id)
		p.n.Store(int32(len(p.m)))
	}
	p.mu.Unlock()
}

// received hands msg, when it is a response to a registered request, to
// that request's RequestStatus.
func (p *pendingCalls) received(msg jsonrpc.Message) {
	if p.n.Load() == 0 {
		return
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	p.mu.Lock()
	rs := p.m[resp.ID]
	if rs != nil {
		delete(p.m, resp.ID)
		p.n.Store(int32(len(p.m)))
	}
	p.mu.Unlock()
	if rs != nil && resp.Error == nil && resp.Result != nil {
		rs.answered(resp.Result)
	}
}
