package mcpadapter

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is one progress notification for a tool call.
type Progress struct {
	// Tool is the tool's name on its server.
	Tool string
	// Progress increases with each notification; Total is 0 when unknown.
	Progress float64
	Total    float64
	Message  string
	// Task is set on the statuses of the task behind the call.
	Task *TaskProgress
}

// progressLinger is how long a call's progress token stays routed after
// the call ends, for notifications that arrive after the result.
const progressLinger = time.Second

// progressToken registers fn for a new progress token, which the caller
// must release.
func (c *Client) progressToken(tool string, fn func(Progress)) (token string, release func()) {
	token = fmt.Sprintf("mcpadapter-%d", c.seq.Add(1))
	c.progMu.Lock()
	c.progress[token] = func(p Progress) {
		p.Tool = tool
		fn(p)
	}
	c.progMu.Unlock()
	return token, func() {
		time.AfterFunc(progressLinger, func() {
			c.progMu.Lock()
			delete(c.progress, token)
			c.progMu.Unlock()
		})
	}
}

// routeProgress hands a progress notification to the call it belongs to and
// to ClientOptions.ProgressHandler.
func (c *Client) routeProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	if tok, ok := req.Params.ProgressToken.(string); ok {
		c.progMu.Lock()
		fn := c.progress[tok]
		c.progMu.Unlock()
		if fn != nil {
			fn(Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
		}
	}
	if c.opts.ProgressHandler != nil {
		c.opts.ProgressHandler(ctx, req)
	}
}

// withProgress gives params a progress token when anyone listens (fn, or
// ClientOptions.ProgressHandler); release must be called when the call
// ends.
func (c *Client) withProgress(params *mcp.CallToolParams, fn func(Progress)) (release func()) {
	if params.GetProgressToken() != nil {
		return func() {} // routed already: a task's token lives as long as the task (task_call.go)
	}
	if fn == nil && c.opts.ProgressHandler == nil {
		return func() {}
	}
	if fn == nil {
		fn = func(Progress) {}
	}
	tok, release := c.progressToken(params.Name, fn)
	params.SetProgressToken(tok)
	return release
}
