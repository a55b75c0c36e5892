package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RecoverMiddleware answers a server's request whose handling panicked
// (go-sdk v1.8.0's sampling handler panics on a message that is null, as
// a hostile server may send; so may an application's handler) with an
// internal error, and logs it: the panic would otherwise end the program,
// since go-sdk handles a server's requests on goroutines of its own.
func RecoverMiddleware(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if v := recover(); v != nil {
					log.ErrorContext(ctx, "handling a server's request panicked", "method", method, "panic", fmt.Sprint(v))
					res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the client failed handling %s", method)}
				}
			}()
			return next(ctx, method, req)
		}
	}
}
