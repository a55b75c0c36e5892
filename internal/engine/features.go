package engine

import (
	"context"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// settles reports whether a request of method made with ctx returns,
// like CallTool, once the notifications the server sent before its answer
// have been handled. A tools/call the engine sends itself (Engine.Send,
// through Session.CallTool) waits in Session.CallTool, which waits for
// one answered on the fast path too; a tools/call a program makes on
// go-sdk's session waits here.
func settles(ctx context.Context, method string) bool {
	switch method {
	case "resources/read", "prompts/get", "completion/complete":
		return true
	case "tools/call":
		return !wire.Tracked(ctx)
	}
	return false
}

// Settle is go-sdk sending middleware of a client whose sessions e makes:
// a resources/read, prompts/get or completion/complete made on one of
// them, by the engine or by a program that took go-sdk's session
// (Client.Session: a gateway relaying a client's request), and a
// tools/call made on one of them by such a program, return once the
// notifications read before the answer have been handled
// (order.Marks.Wait), and note in the request's order.Span, if its
// context carries one, where it stood in the connection's messages. The
// wait is made however the request ends: with the server's answer, with
// an error, or with an answer go-sdk could not decode (the Client adds
// Settle outside RecoverSendingMiddleware). Each round of a 2026-07-28
// request is one request.
func (e *Engine) Settle(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if !settles(ctx, method) {
		return next(ctx, method, req)
	}
	cs, _ := req.GetSession().(*mcp.ClientSession)
	s := e.sessionOf(cs)
	if s == nil {
		return next(ctx, method, req)
	}
	sp := order.SpanFrom(ctx)
	sp.Sent(s.order)
	res, err := next(ctx, method, req)
	s.settle(ctx, sp)
	return res, err
}

// sessionOf returns e's session whose go-sdk session is cs, or nil (one
// still connecting, or ended).
func (e *Engine) sessionOf(cs *mcp.ClientSession) *Session {
	if cs == nil {
		return nil
	}
	s, _ := e.bySDK.Load(cs)
	sess, _ := s.(*Session)
	return sess
}
