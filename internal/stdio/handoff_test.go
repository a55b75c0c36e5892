//go:build unix

package stdio_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handed-over result reaches go-sdk's tools/call from a server that
// never answers ping, whose reading goroutine waits for a line that the
// server will not write: the call returns the held result, the server
// sees no tools/call, and the connection goes on.
func TestHandOffServerIgnoresPing(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	rec := &recorder{}
	cs, _ := connect(t, ctx, &stdio.Transport{Observer: rec}, "-era", "modern", "-ignore-ping")
	if _, err := cs.ListTools(ctx, nil); err != nil { // the reader now waits for the server
		t.Fatal(err)
	}
	held := json.RawMessage(`{"content":[{"type":"text","text":"held"}]}`)
	h := stdio.NewHandOff(held, func(b []byte, id int64) []byte {
		return append(b, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"method":"ping"}`...)
	})
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second) // a bound: the call hangs if the reader is not woken
	defer cancel()
	res, err := cs.CallTool(stdio.WithHandOff(callCtx, h), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "not sent"}})
	if err != nil || text(t, res) != "held" {
		t.Fatalf("handed-over call: %v %v", res, err)
	}
	rec.mu.Lock()
	for _, m := range rec.sent {
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == "tools/call" {
			t.Errorf("the server was sent a tools/call: %s", r.Params)
		}
	}
	rec.mu.Unlock()
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	if err != nil || text(t, res) != "after" {
		t.Fatalf("a call after the hand-over: %v %v", res, err)
	}
}
