package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/argplan"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/mcpadapter/mcpadapter/internal/wire"
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
	// ArgumentPath, if set, maps the JSON Pointer of an argument as the
	// tool's schema names it to the pointer of the same argument in what
	// the model wrote, for the message about invalid arguments: a binding
	// whose schema profile renamed properties passes
	// schemaprofile.Result.ModelPath, so the model reads the names it saw.
	ArgumentPath func(path string) string

	toolTimeout time.Duration // the tool's own timeout (ToolTransform.Timeout), set by Tool.CallWith
	// Task says whether the call runs as an MCP task (see TaskMode);
	// TaskDefault takes ClientOptions.Tasks.
	//
	// When the call's context ends once the server has answered with a
	// task, the call sends tasks/cancel and returns a
	// *TaskCancelledError. When it ends before the server's answer, the
	// call returns at once with the error of any call whose context
	// ended: a *TransportError for which errors.Is(err, context.Canceled)
	// or errors.Is(err, context.DeadlineExceeded) holds, and its call
	// slot (ClientOptions.MaxConcurrentCalls) is free again. On a call
	// that may become a task (a task-augmented 2025-11-25 call, or any
	// call to a 2026-07-28 server that declares the Tasks extension) the
	// Client then waits for the answer in the background, for two
	// seconds at most: a task the answer makes is cancelled with
	// tasks/cancel, sent for the context's CallIdentity; with no answer
	// by then the request is abandoned (notifications/cancelled).
	// Client.Close ends that wait.
	Task TaskMode
	// OnTask, if set, is given the handle of the task the server made for
	// the call, before the call polls it: save it to resume the task
	// elsewhere (Client.ResumeTask) if this process ends.
	OnTask func(TaskHandle)
	// Detach, if set, lets go of the call's task when it is closed: the
	// call stops following the task (at its next poll, or while a
	// question of the task waits for an answer that then fails) and
	// returns a *TaskError wrapping ErrTaskDetached, without sending
	// tasks/cancel; the task goes on at the server, for whoever resumes
	// it (Client.ResumeTask). A 2025-11-25 task's tasks/result that waits
	// for its result is not ended by it.
	Detach <-chan struct{}
}

// toolCall is one tool call on its way to the server.
type toolCall struct {
	tool      string          // the server's name for the tool
	modelName string          // the name the model used
	args      json.RawMessage // one JSON object
	progress  func(Progress)
	meta      map[string]any
	timeouts  engine.Limits    // this call's own limits (CallOptions)
	task      TaskMode         // CallOptions.Task
	onTask    func(TaskHandle) // CallOptions.OnTask
	detach    <-chan struct{}  // CallOptions.Detach
	// resetOnProgress is CallOptions.ResetTimeoutOnProgress.
	resetOnProgress bool
	// viaSDK says the call needs go-sdk's full request machinery (its
	// middleware, its multi-round-trip loop, its handling of the server's
	// requests): a feature that needs it for a call sets it, and the
	// connection engine then keeps the call off its fast path
	// (engine.Call.ViaSDK).
	viaSDK bool
	// relay says the call relays another client's request
	// (Client.RelayCall): it takes a progress token only when it has a
	// progress function of its own.
	relay bool

	// What a pending call keeps to make the call's next rounds (interrupt.go).
	modelArgs json.RawMessage // the arguments as the model sent them
	shaped    bool            // the tool transforms its arguments
	settings  *CallSettings   // the plain-data CallOptions
	principal string          // CallIdentity.Principal
	run       string          // RunFrom
	protocol  string          // the protocol version of the connection, once known
	// lane is the connection a parked call's lane is on (park.go): the
	// call is sent on no other.
	lane *mcp.ClientSession
}

// CallTool calls the tool the server knows as name with args, a JSON object
// (empty means {}); opts may be nil. See Tool.Call for what it returns.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	return c.call(ctx, name, name, args, nil, nil, opts)
}

// call is where every tool call starts. Arguments that are not one JSON
// object are answered with an error result the model can read, without
// asking the server; so are arguments check (when set) finds against the
// tool's schema, check returning the message. The call then goes the way chosen when the client was
// built: callDirect, or callInterruptible for an ElicitInterrupt client.
func (c *Client) call(ctx context.Context, tool, modelName string, modelArgs json.RawMessage, plan *argplan.Plan, check func(json.RawMessage) string, opts *CallOptions) (*Result, error) {
	modelArgs = bytes.TrimSpace(modelArgs)
	if len(modelArgs) == 0 || bytes.Equal(modelArgs, []byte("null")) {
		modelArgs = json.RawMessage("{}")
	}
	args := plan.Wire(modelArgs)
	if err := checkArguments(args); err != nil {
		return errorResult(fmt.Sprintf("Invalid arguments for tool %q: %v. Send a JSON object that matches the tool's input schema.", tool, err)), nil
	}
	if check != nil {
		if msg := check(args); msg != "" {
			return errorResult(msg), nil
		}
	}
	if err := CallIdentityFrom(ctx).check(); err != nil {
		return nil, err
	}
	tc := &toolCall{tool: tool, modelName: modelName, args: args, modelArgs: modelArgs, shaped: plan != nil}
	if opts != nil {
		tc.progress, tc.meta = opts.Progress, opts.Meta
		tc.timeouts, tc.resetOnProgress = opts.timeouts(), opts.ResetTimeoutOnProgress
		tc.task, tc.onTask, tc.detach = opts.Task, opts.OnTask, opts.Detach
	}
	if c.interrupt != nil {
		tc.settings = opts.settings()
		tc.principal, tc.run = principalOf(ctx), RunFrom(ctx)
	}
	tc.meta = callMeta(ctx, tc.meta)
	res, err := c.observedCall(ctx, tc)
	if c.interrupt != nil && err != nil {
		err = c.signInQuestion(tc, err) // websignin.go
	}
	return res, err
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

// progressToken registers fn for a new progress token of a call of tool
// made with ctx, which the caller must release. ClientOptions.ProgressHandler
// sees the call's notifications with the call's identity.
func (c *Client) progressToken(ctx context.Context, tool string, fn func(Progress)) (token string, release func()) {
	id := CallIdentityFrom(ctx)
	return c.progress.Token(func(p *mcp.ProgressNotificationParams) {
		fn(Progress{Tool: tool, Progress: p.Progress, Total: p.Total, Message: p.Message})
	}, func(hctx context.Context) context.Context { return WithCallIdentity(hctx, id) })
}

// withProgress gives params a progress token when anyone listens (fn, or
// ClientOptions.ProgressHandler); release must be called when the call
// ends.
func (c *Client) withProgress(ctx context.Context, params *mcp.CallToolParams, fn func(Progress)) (release func()) {
	if params.GetProgressToken() != nil {
		return func() {} // routed already: a task's token lives as long as the task (task_call.go)
	}
	if fn == nil && !c.progress.Listening() {
		return func() {}
	}
	if fn == nil {
		fn = func(Progress) {}
	}
	tok, release := c.progressToken(ctx, params.Name, fn)
	params.SetProgressToken(tok)
	return release
}

// sendCall sends one tools/call, with tc's _meta and progress routing,
// bounded by tc's time limits, else timeout (zero: none; see
// callDeadline), once a call slot is free. The reply
// knows the result as the server wrote it, when the wire layer saw it.
func (c *Client) sendCall(ctx context.Context, tc *toolCall, params *mcp.CallToolParams, timeout time.Duration) (*callReply, error) {
	release, err := c.callSlot(ctx, params.Name)
	if err != nil {
		return nil, err
	}
	defer release()
	return c.sendHeld(ctx, tc, params, timeout)
}

// sendHeld is sendCall once the call holds its slot.
func (c *Client) sendHeld(ctx context.Context, tc *toolCall, params *mcp.CallToolParams, timeout time.Duration) (*callReply, error) {
	if tc.meta != nil {
		// A copy: go-sdk writes its entries into the _meta it sends, as
		// withProgress writes the token, and tc.meta may be the caller's
		// (CallOptions.Meta), shared by calls in flight.
		params.Meta = maps.Clone(tc.meta)
	}
	// The call's time limits (timeout.go) start once it has a slot.
	ctx, progress, stop := c.callDeadline(ctx, tc, timeout)
	defer stop()
	if progress != nil || !tc.relay {
		defer c.withProgress(ctx, params, progress)()
	}
	var rec *wire.RequestStatus
	var reply *callReply
	var undecodable error
	r := engine.Request{Op: "tools/call", Tool: params.Name, Attempt: func(r *wire.RequestStatus) { rec = r }}
	call := engine.Call{Params: params, ViaSDK: tc.viaSDK}
	err := c.eng.Send(ctx, r, func(ctx context.Context, s *engine.Session) error {
		if tc.lane != nil && s.SDK() != tc.lane {
			return errLaneMoved
		}
		res, sent, err := s.CallTool(ctx, call)
		var raw engine.Raw = rec
		if sent != nil {
			raw = sent
		}
		// A result go-sdk could not decode was delivered: not a
		// transport failure, and never to be sent again.
		reply, undecodable, err = engine.ReplyOf(res, raw, err)
		return err
	})
	if err == nil && undecodable != nil {
		return nil, &ContentError{Server: c.name, Tool: params.Name, Index: -1, Err: undecodable}
	}
	return reply, err
}

// callSlot waits for one of the tool-call slots of
// ClientOptions.MaxConcurrentCalls and returns its release. A call whose
// context ends while it waits is a *TransportError that wraps the
// context's cause and was never sent.
func (c *Client) callSlot(ctx context.Context, tool string) (release func(), _ error) {
	release, err := c.slots.Take(ctx, c.log, tool)
	if err != nil {
		return nil, c.transportError(nil, "tools/call", tool, err)
	}
	return release, nil
}
