package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AnswerPanicError is a server's answer that go-sdk's decoding panicked on
// (go-sdk v1.8.0's InputRequestMap, in the results of tools/call,
// prompts/get and resources/read, panics on a question that is null, as a
// hostile server may send). The server answered: the request was
// delivered and is never sent again.
type AnswerPanicError struct {
	Method string // the request answered
	Value  any    // what go-sdk panicked with
}

func (e *AnswerPanicError) Error() string {
	return fmt.Sprintf("the server's answer to %s cannot be read: go-sdk failed decoding it (%v)", e.Method, e.Value)
}

// RecoverSendingMiddleware returns a panic while a request to the server
// is sent and its answer decoded (go-sdk decodes the answer in the
// caller's goroutine, and panics on some a hostile server may send) as an
// *AnswerPanicError, and logs it. Add it first, so that it is innermost:
// the other middlewares see an error, never a panic.
func RecoverSendingMiddleware(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if v := recover(); v != nil {
					log.WarnContext(ctx, "go-sdk panicked sending a request or decoding its answer", "method", method, "panic", fmt.Sprint(v))
					res, err = nil, &AnswerPanicError{Method: method, Value: v}
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// sdkCallTool is go-sdk's CallTool on s's connection, with a panic
// while it runs in this goroutine (its decoding of the answer) returned
// as an *AnswerPanicError, marked delivered.
func (s *Session) sdkCallTool(ctx context.Context, params *mcp.CallToolParams) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.e.cfg.Log.Warn("go-sdk panicked decoding a server's answer to tools/call", "tool", params.Name, "panic", fmt.Sprint(v))
			res, err = nil, &sdkerr.DeliveredError{Err: &AnswerPanicError{Method: "tools/call", Value: v}}
		}
	}()
	return s.cs.CallTool(ctx, params)
}

// decodeResult decodes a tools/call result as go-sdk's CallTool does,
// with a panic of go-sdk's decoding returned as an *AnswerPanicError.
func decodeResult(result []byte) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, &AnswerPanicError{Method: "tools/call", Value: v}
		}
	}()
	res = new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(result); err != nil {
		return nil, err
	}
	return res, nil
}

// DecodeResult decodes a tools/call result as sent (a task's, say) as
// go-sdk's CallTool does, with a panic of go-sdk's decoding returned as
// an *AnswerPanicError.
func DecodeResult(result []byte) (*mcp.CallToolResult, error) {
	return decodeResult(result)
}
