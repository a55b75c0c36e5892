//lint:file-ignore SA1019 sampling, deprecated in 2026-07-28, lives in the handshake era and in 2026-07-28 rounds, which we support

package inputwire

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSamplingWithTools(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()
	answer := func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		if len(req.Params.Messages) == 1 && req.Params.Messages[0].Content.(*mcp.TextContent).Text == "panic" {
			panic("handler panicked")
		}
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "hi"}}, nil
	}
	h := SamplingWithTools(log, answer)
	ask := func(text string) *mcp.CreateMessageWithToolsRequest {
		return &mcp.CreateMessageWithToolsRequest{Params: &mcp.CreateMessageWithToolsParams{
			Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: text}}}}}}
	}

	res, err := h(ctx, ask("hello"))
	if err != nil || res.Model != "m" || len(res.Content) != 1 {
		t.Fatalf("answer: %#v, %v; want the handler's result", res, err)
	}
	var rpc *jsonrpc.Error
	if _, err := h(ctx, nil); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("no params: %v; want invalid params", err)
	}
	null := &mcp.CreateMessageWithToolsRequest{Params: &mcp.CreateMessageWithToolsParams{Messages: []*mcp.SamplingMessageV2{nil}}}
	if _, err := h(ctx, null); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("null message: %v; want invalid params", err)
	}
	if _, err := h(ctx, ask("panic")); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError {
		t.Errorf("panicking handler: %v; want an internal error", err)
	}
	if !strings.Contains(logs.String(), "handler panicked") {
		t.Errorf("the panic was not logged: %q", logs.String())
	}
}

func TestRecoveredElicitation(t *testing.T) {
	h := RecoveredElicitation(slog.New(slog.DiscardHandler), func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		panic("boom")
	})
	var rpc *jsonrpc.Error
	if _, err := h(context.Background(), &mcp.ElicitRequest{}); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError || rpc.Message != "the client failed handling elicitation/create" {
		t.Errorf("panicking handler: %v; want an internal error", err)
	}
}
