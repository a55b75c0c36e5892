package engine

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AnswerPanicError is a server's answer to a tools/call that go-sdk's
// decoding panicked on (go-sdk v1.8.0's InputRequestMap panics on a
// question that is null, as a hostile server may send). The server
// answered: the call was delivered and is never sent again.
type AnswerPanicError struct {
	Value any // what go-sdk panicked with
}

func (e *AnswerPanicError) Error() string {
	return fmt.Sprintf("the server's answer to tools/call cannot be read: go-sdk failed decoding it (%v)", e.Value)
}

// sdkCallTool is go-sdk's CallTool on s's connection, with a panic
// while it runs in this goroutine (its decoding of the answer) returned
// as an *AnswerPanicError, marked delivered.
func (s *Session) sdkCallTool(ctx context.Context, params *mcp.CallToolParams) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.e.cfg.Log.Warn("go-sdk panicked decoding a server's answer to tools/call", "tool", params.Name, "panic", fmt.Sprint(v))
			res, err = nil, &deliveredError{&AnswerPanicError{Value: v}}
		}
	}()
	return s.cs.CallTool(ctx, params)
}

// decodeResult decodes a tools/call result as go-sdk's CallTool does,
// with a panic of go-sdk's decoding returned as an *AnswerPanicError.
func decodeResult(result []byte) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, &AnswerPanicError{Value: v}
		}
	}()
	res = new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(result); err != nil {
		return nil, err
	}
	return res, nil
}
