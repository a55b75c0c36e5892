package engine

import (
	"context"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BacklogMiddleware is go-sdk receiving middleware that tells a session's
// connection what happened to the messages it passed up. Every
// connection's markers (internal/order): a marker is noted reached and
// handed to no handler, and every notification counts as handled once
// its handler has returned, so that a call returns after the
// notifications read before its answer have been handled (Session.CallTool
// waits for the markers). A stdio connection also hears of each message
// handled, so that it holds back a server that floods the client (see
// internal/stdio): a notification counts once its handler has returned; a
// request (such as elicitation/create) once it started, since it runs on
// its own and may wait for a user. A log message read on a request's own
// stream (streamable HTTP) loses the tag that says so before any handler
// sees it, and its handlers' context names the stream
// (order.StreamFrom). A request a notification's handler makes on the
// session, while the handler runs, does not wait for the notifications
// queued behind it (order.Marks.Handle).
func BacklogMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// go-sdk hands handlers a context made from the one given to
		// Connect, which carries the connect attempt's state.
		st, _ := ctx.Value(dialKey{}).(*dialState)
		if st == nil || st.session == nil {
			return next(ctx, method, req)
		}
		s := st.session
		conn := s.stdio
		if !strings.HasPrefix(method, "notifications/") {
			if conn != nil {
				conn.MessageHandled()
			}
			return next(ctx, method, req)
		}
		defer s.order.Handled()
		if conn != nil {
			defer conn.MessageHandled()
		}
		switch p := req.GetParams().(type) {
		case *mcp.ProgressNotificationParams:
			if p != nil && s.order.Reached(p.ProgressToken) {
				return nil, nil // the connection's own, for no handler
			}
		//lint:ignore SA1019 logging lives in the handshake era, which we support
		case *mcp.LoggingMessageParams:
			// A log message read on a request's stream names it
			// (order.Stream); no handler sees the tag.
			if p != nil {
				if st, meta, ok := s.order.Untag(p.Meta); ok {
					p.Meta = meta
					ctx = order.WithStream(ctx, st)
				}
			}
		}
		// A request the handler makes on the session does not wait for
		// the notifications queued behind this one (order.Marks.Handle).
		ctx, returned := s.order.Handle(ctx)
		defer returned()
		return next(ctx, method, req)
	}
}
