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
}

// CallOption configures one tool call.
type CallOption func(*callConfig)

type callConfig struct {
	progress func(Progress)
	meta     map[string]any
	// modelName is the tool's name as the model knows it.
	modelName string
	// interruptible allows an ElicitInterrupt client to stop the call for
	// the user's answers.
	interruptible bool
	// noTimeout skips ClientOptions.Timeout (a call that may wait for a
	// person).
	noTimeout bool
}

// OnProgress has the call report its progress notifications to fn.
// fn runs on the connection's goroutine and must not block for long.
//
// Notifications are handled apart from responses (in go-sdk), so one the
// server sent just before its result may reach fn shortly after Call
// returns; fn keeps receiving this call's notifications for a second
// after the call ends.
func OnProgress(fn func(Progress)) CallOption {
	return func(c *callConfig) { c.progress = fn }
}

// WithMeta sends meta as the _meta of the tools/call request.
func WithMeta(meta map[string]any) CallOption {
	return func(c *callConfig) { c.meta = meta }
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
