package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that takes the server/discover probe but answers after
// ProbeTimeout (a loaded machine) has already recorded the client as
// initialized: the initialize handshake go-sdk falls back to on the same
// connection is refused as a duplicate ("duplicate \"initialize\"
// received"). The adapter connects again, pinned to the handshake, on a
// new server session (a new process, over stdio).
func TestProbeAnsweredLateConnectsAgain(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := testserver.New(testserver.Options{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "server/discover" {
				// Handled, but answered only when the client gives up on
				// it (notifications/cancelled) or the session ends.
				<-ctx.Done()
			}
			return res, err
		}
	})
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Name: "late", Logger: quietLogger(), ProbeTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if info.Era != mcpadapter.EraHandshake {
		t.Errorf("era %v, want the handshake after an unanswered probe", info.Era)
	}
	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"once"}`), nil)
	if err != nil || res.IsError || res.Text() != "once" {
		t.Fatalf("echo: %v %+v", err, res)
	}
}

// A connect the server refuses fails the call with a TransportError: the
// tool never ran, so it is not an error result for the model.
func TestProbeRefusedConnectIsNotAToolResult(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-era", "legacy", "-refuse-initialize"), &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"never"}`), nil)
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) || te.Op != "initialize" {
		t.Fatalf("got %v %+v, want a TransportError from initialize", err, res)
	}
}
