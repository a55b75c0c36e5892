package engine

import (
	"context"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// settles reports whether a request of method returns, like CallTool,
// once the notifications the server sent before its answer have been
// handled.
func settles(method string) bool {
	switch method {
	case "resources/read", "prompts/get", "completion/complete":
		return true
	}
	return false
}

// Settle is go-sdk sending middleware of a client whose sessions e makes:
// a resources/read, prompts/get or completion/complete made on one of
// them, by the engine or by a program that took go-sdk's session
// (Client.Session: a gateway relaying a client's request), returns once
// the notifications read before its answer have been handled
// (order.Marks.Wait), and notes in the request's order.Span, if its
// context carries one, where it stood in the connection's messages.
func (e *Engine) Settle(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if !settles(method) {
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
