package testserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NotifyIn is the input of the notify tool.
type NotifyIn struct {
	// Text is the log message's data, the progress report's message and
	// the answer's text.
	Text string `json:"text"`
	// Log sends a log message at level info (when the client asked for
	// that level); Progress sends a progress report (when the call has a
	// progress token). Both: the log message first.
	Log      bool `json:"log"`
	Progress bool `json:"progress"`
}

// addNotifyTool registers notify: a log message and a progress report
// sent immediately before the answer, which follows at once (no sleep),
// so that the notifications race the answer on the client's side.
func addNotifyTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "notify", Description: "Send a log message and a progress report, then answer at once.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"log":{"type":"boolean"},"progress":{"type":"boolean"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in NotifyIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if in.Log {
				//lint:ignore SA1019 logging lives in the handshake era, which this server speaks too
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: in.Text}); err != nil {
					return nil, err
				}
			}
			if tok := req.Params.GetProgressToken(); in.Progress && tok != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 1, Message: in.Text}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text(in.Text)}}, nil
		})
}
