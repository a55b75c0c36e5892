//lint:file-ignore SA1019 sampling, deprecated in 2026-07-28, lives in the handshake era and in 2026-07-28 rounds, which we support

package inputwire

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The handlers of a server's questions, as go-sdk calls them. go-sdk's
// multi-round-trip loop (a 2026-07-28 server's tools/call, prompts/get or
// resources/read answered with questions) answers each question on a
// goroutine of its own, outside the receiving middleware: a panic there,
// in go-sdk's conversion of a hostile server's question or in the
// application's handler, would end the program. These wrappers answer it
// with an error instead.

// errHandlerPanicked is the error a question is answered with when its
// handler panicked; it is logged.
func errHandlerPanicked(ctx context.Context, log *slog.Logger, method string, v any) error {
	log.ErrorContext(ctx, "handling a server's request panicked", "method", method, "panic", fmt.Sprint(v))
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the client failed handling %s", method)}
}

// SamplingWithTools is h, a SamplingHandler, as go-sdk's
// CreateMessageWithToolsHandler: the request converted as go-sdk converts
// it for a CreateMessageHandler (SamplingBase), but a message that is
// null refused (go-sdk's conversion dereferences it), and a panic
// returned as an error.
func SamplingWithTools(log *slog.Logger, h func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)) func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	return func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (res *mcp.CreateMessageWithToolsResult, err error) {
		defer func() {
			if v := recover(); v != nil {
				res, err = nil, errHandlerPanicked(ctx, log, "sampling/createMessage", v)
			}
		}()
		if req == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: sampling/createMessage without params"}
		}
		p, err := SamplingBase(req.Params)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
		}
		r, err := h(ctx, &mcp.CreateMessageRequest{Session: req.Session, Params: p})
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's sampling handler returned no result"}
		}
		var content []mcp.Content
		if r.Content != nil {
			content = []mcp.Content{r.Content}
		}
		return &mcp.CreateMessageWithToolsResult{Meta: r.Meta, Content: content, Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
	}
}

// RecoveredElicitation is h, an ElicitationHandler, with a panic returned
// as an error.
func RecoveredElicitation(log *slog.Logger, h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (res *mcp.ElicitResult, err error) {
		defer func() {
			if v := recover(); v != nil {
				res, err = nil, errHandlerPanicked(ctx, log, "elicitation/create", v)
			}
		}()
		return h(ctx, req)
	}
}
