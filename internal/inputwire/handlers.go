//lint:file-ignore SA1019 sampling, deprecated in 2026-07-28, lives in the handshake era and in 2026-07-28 rounds, which we support

package inputwire

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The handlers of a server's questions, as go-sdk and the client's own
// multi-round-trip loop (AutoRounds) call them. A panic in go-sdk's
// conversion of a hostile server's question or in the application's
// handler, outside the receiving middleware, would end the program or
// the caller's goroutine: these wrappers answer the question with an
// error instead.

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

// Elicit answers p, the elicitation of a round or of a task under key,
// with h, a client's elicitation handler, as go-sdk answers a server's
// elicitation/create: the question is checked first (a form has no URL
// and a flat schema (FormSchema); a URL question has a URL, a web page
// (WebPage), and no schema), and an accepted form's content is checked
// against the requested schema, with its defaults filled in
// (elicitation.Request.Check). cs is the session the question came on
// (nil: none). With h nil it returns go-sdk's error for a client without
// elicitation.
func Elicit(ctx context.Context, h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), cs *mcp.ClientSession, key string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if h == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "client does not support elicitation"}
	}
	invalid := func(msg string) error { return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg} }
	switch p.Mode {
	case "", "form":
		if p.URL != "" {
			return nil, invalid("URL must not be set for form elicitation")
		}
		if err := FormSchema(p.RequestedSchema); err != nil {
			return nil, invalid(err.Error())
		}
	case "url":
		if p.RequestedSchema != nil {
			return nil, invalid("requestedSchema must not be set for URL elicitation")
		}
		if p.URL == "" {
			return nil, invalid("URL must be set for URL elicitation")
		}
		if err := WebPage(p.URL); err != nil {
			return nil, invalid("the URL to send the user to is " + err.Error())
		}
	default:
		return nil, invalid(fmt.Sprintf("unsupported elicitation mode: %q", p.Mode))
	}
	res, err := h(ctx, &mcp.ElicitRequest{Session: cs, Params: p})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's elicitation handler returned no result"}
	}
	if res.Action != string(elicitation.Accept) || p.RequestedSchema == nil || res.Content == nil {
		return res, nil
	}
	checked, err := Request(key, p).Check(elicitation.Response{Action: elicitation.Accept, Content: res.Content})
	if err != nil {
		return nil, invalid("the elicitation handler's answer does not fit the requested schema: " + err.Error())
	}
	out := *res
	out.Content = checked.Content
	return &out, nil
}

// WebPagesOnly is h, an elicitation handler, with a URL question whose
// URL is not a web page (WebPage) declined before h sees it (and logged),
// as a parked call's is.
func WebPagesOnly(log *slog.Logger, h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if req != nil && req.Params != nil {
			if err := WebPage(req.Params.URL); err != nil {
				log.WarnContext(ctx, "a server asked to send the user to a URL that is not a web page; declined", "url", err)
				return &mcp.ElicitResult{Action: string(elicitation.Decline)}, nil
			}
		}
		return h(ctx, req)
	}
}
