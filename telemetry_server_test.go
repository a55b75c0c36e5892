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
// JSON-RPC error by its code (when JSON-RPC reserves it, else "_OTHER"),
// a tool error, a deadline, any other error.
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
		{"reserved bounds", &jsonrpc.Error{Code: -32768}, false, mcpadapter.ServerOperationResult{ErrorType: "-32768", Code: -32768}},
		{"reserved bounds", &jsonrpc.Error{Code: -32000}, false, mcpadapter.ServerOperationResult{ErrorType: "-32000", Code: -32000}},
		{"server's own code", &jsonrpc.Error{Code: 1234}, false, mcpadapter.ServerOperationResult{ErrorType: "_OTHER", Code: 1234}},
		{"below reserved", &jsonrpc.Error{Code: -32769}, false, mcpadapter.ServerOperationResult{ErrorType: "_OTHER", Code: -32769}},
		{"above reserved", &jsonrpc.Error{Code: -31999}, false, mcpadapter.ServerOperationResult{ErrorType: "_OTHER", Code: -31999}},
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
