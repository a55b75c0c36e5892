package engine

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BacklogMiddleware is go-sdk receiving middleware that tells the stdio connection of a session each message
// from the server that has been handled, so that it holds back a server
// that floods the client, and each barrier it reaches, so that the result
// of a call with a progress token comes after the notifications read
// before it have been handled (see internal/stdio): a call's progress
// notifications reach their handler before the call returns. A
// notification counts once its handler has returned; a request (such as
// elicitation/create) once it started, since it runs on its own and may
// wait for a user.
func BacklogMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// go-sdk hands handlers a context made from the one given to
		// Connect, which carries the connect attempt's state.
		st, _ := ctx.Value(dialKey{}).(*dialState)
		if st == nil || st.session == nil || st.session.stdio == nil {
			return next(ctx, method, req)
		}
		conn := st.session.stdio
		if !strings.HasPrefix(method, "notifications/") {
			conn.MessageHandled()
			return next(ctx, method, req)
		}
		defer conn.MessageHandled()
		if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && p != nil && conn.Barrier(p.ProgressToken) {
			return nil, nil // the connection's own, for no handler
		}
		return next(ctx, method, req)
	}
}
