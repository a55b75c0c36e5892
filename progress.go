package mcpadapter

import "github.com/modelcontextprotocol/go-sdk/mcp"

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

// progressToken registers fn for a new progress token of a call of tool,
// which the caller must release.
func (c *Client) progressToken(tool string, fn func(Progress)) (token string, release func()) {
	return c.progress.Token(func(p *mcp.ProgressNotificationParams) {
		fn(Progress{Tool: tool, Progress: p.Progress, Total: p.Total, Message: p.Message})
	})
}

// withProgress gives params a progress token when anyone listens (fn, or
// ClientOptions.ProgressHandler); release must be called when the call
// ends.
func (c *Client) withProgress(params *mcp.CallToolParams, fn func(Progress)) (release func()) {
	if params.GetProgressToken() != nil {
		return func() {} // routed already: a task's token lives as long as the task (task_call.go)
	}
	if fn == nil && !c.progress.Listening() {
		return func() {}
	}
	if fn == nil {
		fn = func(Progress) {}
	}
	tok, release := c.progressToken(params.Name, fn)
	params.SetProgressToken(tok)
	return release
}
