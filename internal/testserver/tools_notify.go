package testserver

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

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
	// Logs, with Log, sends that many log messages instead of one, their
	// data Text, a space, the message's number and Pad bytes of "x".
	Logs int `json:"logs,omitempty"`
	Pad  int `json:"pad,omitempty"`
	// MetaPad gives each log message a _meta member "pad" of that many
	// bytes of "x" (a server whose notifications are large outside their
	// data).
	MetaPad int `json:"metaPad,omitempty"`
	// Progresses, with Progress, sends that many progress reports instead
	// of one, their message Text, a space, the report's number and Pad
	// bytes of "x"; the last one's pad is LastPad bytes when set.
	Progresses int `json:"progresses,omitempty"`
	LastPad    int `json:"lastPad,omitempty"`
	// LogAfter, when set, is a log message sent AfterMS milliseconds
	// after the answer, with no call in flight: a server that logs after
	// its answer.
	LogAfter string `json:"logAfter,omitempty"`
	AfterMS  int    `json:"afterMs,omitempty"`
}

// addNotifyTool registers notify: a log message and a progress report
// sent immediately before the answer, which follows at once (no sleep),
// so that the notifications race the answer on the client's side.
func addNotifyTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "notify", Description: "Send a log message and a progress report, then answer at once.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"log":{"type":"boolean"},"progress":{"type":"boolean"},"logs":{"type":"integer"},"pad":{"type":"integer"},"metaPad":{"type":"integer"},"progresses":{"type":"integer"},"lastPad":{"type":"integer"},"logAfter":{"type":"string"},"afterMs":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in NotifyIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if in.Log {
				if err := notifyLogs(ctx, req.Session, in); err != nil {
					return nil, err
				}
			}
			if tok := req.Params.GetProgressToken(); in.Progress && tok != nil {
				if err := notifyProgress(ctx, req.Session, tok, in); err != nil {
					return nil, err
				}
			}
			if in.LogAfter != "" {
				ss := req.Session
				time.AfterFunc(time.Duration(max(0, min(in.AfterMS, 60000)))*time.Millisecond, func() {
					//lint:ignore SA1019 logging lives in the handshake era, which this server speaks too
					_ = ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: in.LogAfter})
				})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text(in.Text)}}, nil
		})
}

// notifyLogs sends the log messages of the notify call in.
func notifyLogs(ctx context.Context, ss *mcp.ServerSession, in NotifyIn) error {
	if in.Logs <= 0 {
		//lint:ignore SA1019 logging lives in the handshake era, which this server speaks too
		return ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: in.Text})
	}
	pad := strings.Repeat("x", max(0, min(in.Pad, 1<<20)))
	var meta mcp.Meta
	if in.MetaPad > 0 {
		meta = mcp.Meta{"pad": strings.Repeat("x", min(in.MetaPad, 1<<20))}
	}
	for i := range min(in.Logs, 10000) {
		//lint:ignore SA1019 logging lives in the handshake era, which this server speaks too
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Meta: meta, Level: "info", Data: in.Text + " " + strconv.Itoa(i) + pad}); err != nil {
			return err
		}
	}
	return nil
}

// notifyProgress sends the progress reports of the notify call in, with
// the call's progress token tok.
func notifyProgress(ctx context.Context, ss *mcp.ServerSession, tok any, in NotifyIn) error {
	if in.Progresses <= 0 {
		return ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 1, Message: in.Text})
	}
	n := min(in.Progresses, 10000)
	for i := range n {
		pad := in.Pad
		if i == n-1 && in.LastPad > 0 {
			pad = in.LastPad
		}
		msg := in.Text + " " + strconv.Itoa(i) + strings.Repeat("x", max(0, min(pad, 16<<20)))
		if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: float64(n), Message: msg}); err != nil {
			return err
		}
	}
	return nil
}

// NotifyURIPrefix starts the URIs of the notify resources: reading
// NotifyURIPrefix+TEXT sends the log message TEXT and answers TEXT at
// once. The prompt notify (argument text) and completing any argument
// (its value the text) do the same.
const NotifyURIPrefix = "notify://"

// addNotifyFeatures registers the notify resource template and prompt of
// Options.Notify.
func addNotifyFeatures(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: NotifyURIPrefix + "{text}", Name: "notify", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			text := strings.TrimPrefix(req.Params.URI, NotifyURIPrefix)
			if err := notifyLogs(ctx, req.Session, NotifyIn{Text: text}); err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "notify", Description: "Send a log message, then answer at once.", Arguments: []*mcp.PromptArgument{{Name: "text"}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			text := req.Params.Arguments["text"]
			if err := notifyLogs(ctx, req.Session, NotifyIn{Text: text}); err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})
}

// notifyComplete is the completion handler of Options.Notify: it sends
// the log message of the argument's value and completes it to itself.
func notifyComplete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	v := req.Params.Argument.Value
	if err := notifyLogs(ctx, req.Session, NotifyIn{Text: v}); err != nil {
		return nil, err
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{v}}}, nil
}
