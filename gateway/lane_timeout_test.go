package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLaneWaitEndsWithTimeout: on a handshake-era server with no extra
// connections (MaxExtraConnections < 0), a client that can be asked
// questions waits for another's call (which reports progress, so that
// CallTimeout keeps restarting for it) to leave the lane; CallTimeout
// ends the wait, and the client gets the timeout's error (CodeTimeout,
// naming the tool and the server), not an internal one.
func TestLaneWaitEndsWithTimeout(t *testing.T) {
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	_, url := startGateway(t, []Server{{Name: "s", Target: up.URL}}, &Options{CallTimeout: 300 * time.Millisecond, MaxExtraConnections: -1})
	asker := func() *mcp.ClientSession {
		return connect(t, url, v1125, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	}
	a, b := asker(), asker()
	ctx := testCtx(t, 30*time.Second)
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 200}})
		done <- err
	}()
	if err := st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("progress") > 0 }); err != nil {
		t.Fatal(err)
	}
	_, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != CodeTimeout || !strings.Contains(we.Message, `tool "echo" of server "s"`) {
		t.Errorf("the call that waited in the lane: %v, want a CodeTimeout error naming the tool", err)
	}
	if err := <-done; err != nil {
		t.Errorf("the call reporting progress: %v", err)
	}
}
