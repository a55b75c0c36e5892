//lint:file-ignore SA1019 the test server logs as a server of every era may

package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addLateErrorTool registers on srv the tool bad_params: it reports
// progress (when the call has a progress token) and logs, then refuses the
// call's params (InvalidParams). go-sdk's 2026-07-28 handler gives that
// error an HTTP status of its own (400), too late once the notifications
// began the call's stream: it writes the error's JSON bare after them.
func addLateErrorTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "bad_params", Description: "Report progress, then refuse the call's params.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := range 2 {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 2}); err != nil {
						return nil, err
					}
				}
			}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "bp log"}); err != nil {
				return nil, err
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the server refuses these params"}
		})
}

// TestErrorAfterNotificationsOverStreamable: a 2026-07-28 server of go-sdk
// whose call reports progress or logs, then answers with an error that has
// an HTTP status of its own, writes that error bare after the call's SSE
// events; the client takes it as the call's answer.
func TestErrorAfterNotificationsOverStreamable(t *testing.T) {
	t.Parallel()
	srv := testserver.New(testserver.Options{Name: "bp", Era: testserver.Modern})
	addLateErrorTool(srv)
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	// (The client asks for no log level at 2026-07-28: the server's log
	// message goes nowhere, and a call without a progress token gets the
	// error as a JSON body with status 400.)
	for _, cs := range []struct {
		name     string
		progress bool
		logs     bool
	}{{"progress", true, false}, {"progress, a log handler", true, true}, {"neither", false, false}} {
		for _, disable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/DisableFastPath=%v", cs.name, disable), func(t *testing.T) {
				opts := &mcpadapter.ClientOptions{Logger: quietLogger(), ProtocolVersion: testserver.ModernVersion, DisableFastPath: disable}
				if cs.logs {
					opts.LogHandler = func(context.Context, *mcp.LoggingMessageRequest) {}
				}
				c, err := mcpadapter.NewClient(url, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var co *mcpadapter.CallOptions
				if cs.progress {
					co = &mcpadapter.CallOptions{Progress: func(mcpadapter.Progress) {}}
				}
				// The server's refusal of a call's params, as for any
				// server: an error result naming the tool.
				res, err := c.CallTool(testCtx(t), "bad_params", json.RawMessage(`{}`), co)
				const want = `Error calling tool "bad_params": the server refuses these params (MCP error -32602)`
				if err != nil || res == nil || !res.IsError || res.Text() != want {
					t.Fatalf("CallTool = %+v, %v; want the error result %q", res, err, want)
				}
				// The client goes on.
				res, err = c.CallTool(testCtx(t), "echo", json.RawMessage(`{"text":"after"}`), co)
				if err != nil || res.Text() != "after" {
					t.Fatalf("the next call: %+v, %v", res, err)
				}
			})
		}
	}
}
