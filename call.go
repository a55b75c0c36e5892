package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallOptions configures one tool call. A nil *CallOptions is a plain call.
type CallOptions struct {
	// Progress, if set, receives the call's progress notifications. It
	// runs on the connection's goroutine and must not block for long.
	//
	// Over stdio, the notifications a server sends before its result
	// have all reached Progress when the call returns. Over HTTP and
	// in-process, go-sdk handles notifications apart from responses, so
	// one sent just before the result may reach Progress shortly after
	// the call returns; Progress keeps receiving this call's
	// notifications for a second after the call ends.
	Progress func(Progress)
	// Meta is sent as the _meta of the tools/call request, over the
	// entries of the context's CallIdentity.
	Meta map[string]any

	// Timeout, if positive, bounds this call instead of the tool's
	// timeout (ToolTransform.Timeout, a config file's per-tool
	// "timeout") and ClientOptions.Timeout. When it fires the call
	// fails with a *TransportError whose Err is a *TimeoutError.
	Timeout time.Duration
	// ResetTimeoutOnProgress restarts the call's timeout each time the
	// server reports progress (ClientOptions.ResetTimeoutOnProgress does
	// it for every call).
	ResetTimeoutOnProgress bool
	// MaxTotalTimeout, if positive, bounds the call overall, progress or
	// not, instead of ClientOptions.MaxTotalTimeout.
	MaxTotalTimeout time.Duration

	toolTimeout time.Duration // the tool's own timeout (ToolTransform.Timeout), set by Tool.CallWith
	// Task says whether the call runs as an MCP task (see TaskMode);
	// TaskDefault takes ClientOptions.Tasks.
	Task TaskMode
	// OnTask, if set, is given the handle of the task the server made for
	// the call, before the call polls it: save it to resume the task
	// elsewhere (Client.ResumeTask) if this process ends.
	OnTask func(TaskHandle)
}

// toolCall is one tool call on its way to the server.
type toolCall struct {
	tool      string          // the server's name for the tool
	modelName string          // the name the model used
	args      json.RawMessage // one JSON object
	progress  func(Progress)
	meta      map[string]any
	timeouts  callTimeouts     // this call's own limits (CallOptions)
	task      TaskMode         // CallOptions.Task
	onTask    func(TaskHandle) // CallOptions.OnTask

	// What a pending call keeps to make the call's next rounds (interrupt.go).
	modelArgs json.RawMessage // the arguments as the model sent them
	shaped    bool            // the tool transforms its arguments
	settings  *CallSettings   // the plain-data CallOptions
	principal string          // CallIdentity.Principal
	run       string          // RunFrom
	protocol  string          // the protocol version of the connection, once known
}

// CallTool calls the tool the server knows as name with args, a JSON object
// (empty means {}); opts may be nil. See Tool.Call for what it returns.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	return c.call(ctx, name, name, args, nil, opts)
}

// call is where every tool call starts. Arguments that are not one JSON
// object are answered with an error result the model can read, without
// asking the server. The call then goes the way chosen when the client was
// built: callDirect, or callInterruptible for an ElicitInterrupt client.
func (c *Client) call(ctx context.Context, tool, modelName string, modelArgs json.RawMessage, plan *argPlan, opts *CallOptions) (*Result, error) {
	modelArgs = bytes.TrimSpace(modelArgs)
	if len(modelArgs) == 0 || bytes.Equal(modelArgs, []byte("null")) {
		modelArgs = json.RawMessage("{}")
	}
	args := plan.wire(modelArgs)
	if err := checkArguments(args); err != nil {
		return errorResult(fmt.Sprintf("Invalid arguments for tool %q: %v. Send a JSON object that matches the tool's input schema.", tool, err)), nil
	}
	if err := CallIdentityFrom(ctx).check(); err != nil {
		return nil, err
	}
	tc := &toolCall{tool: tool, modelName: modelName, args: args, modelArgs: modelArgs, shaped: plan != nil}
	if opts != nil {
		tc.progress, tc.meta = opts.Progress, opts.Meta
		tc.timeouts = opts.timeouts()
		tc.task, tc.onTask = opts.Task, opts.OnTask
	}
	if c.interrupt != nil {
		tc.settings = opts.settings()
		tc.principal, tc.run = principalOf(ctx), RunFrom(ctx)
	}
	tc.meta = callMeta(ctx, tc.meta)
	return c.observedCall(ctx, tc)
}

// callDirect makes a call that cannot stop for the user's answers.
func (c *Client) callDirect(ctx context.Context, tc *toolCall) (*Result, error) {
	if r, err, ok := c.callAsTask(ctx, tc); ok { // task.go
		return r, err
	}
	res, err := c.sendTaskable(ctx, tc, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args}, c.opts.Timeout)
	if err != nil {
		return refusal(tc.tool, err)
	}
	if r, err, ok := c.taskReply(ctx, tc, res); ok { // a task the server made
		return r, err
	}
	return convertResult(c.name, tc.tool, res)
}

// checkArguments reports whether args is one JSON object.
func checkArguments(args json.RawMessage) error {
	if args[0] != '{' {
		return errors.New("arguments must be a JSON object")
	}
	if !jsonscan.Valid(args) { // json.Valid's verdict, faster
		return errors.New("arguments are not valid JSON")
	}
	return nil
}
