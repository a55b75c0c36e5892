package mcpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestNewServerOperationResult: how a gateway's answer is described: a
// JSON-RPC error by its code, a tool error, a deadline, any other error.
func TestNewServerOperationResult(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		toolError bool
		want      mcpadapter.ServerOperationResult
	}{
		{"ok", nil, false, mcpadapter.ServerOperationResult{}},
		{"tool error", nil, true, mcpadapter.ServerOperationResult{ToolError: true, ErrorType: "tool_error"}},
		{"rpc", fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: -32602, Message: "unknown tool"}), false, mcpadapter.ServerOperationResult{ErrorType: "-32602", Code: -32602}},
		{"rpc and tool error", &jsonrpc.Error{Code: -32001}, true, mcpadapter.ServerOperationResult{ErrorType: "-32001", Code: -32001}},
		{"deadline", context.DeadlineExceeded, false, mcpadapter.ServerOperationResult{ErrorType: "timeout"}},
		{"other", errors.New("boom"), false, mcpadapter.ServerOperationResult{ErrorType: "_OTHER"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := mcpadapter.NewServerOperationResult(tt.err, tt.toolError)
			tt.want.Err = tt.err
			if got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}
