package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/taskfollow"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callAsTask makes tc a task-augmented tools/call (2025-11-25) when the
// tool and the call's mode ask for it; ok is false when tc is a plain
// call.
func (c *Client) callAsTask(ctx context.Context, tc *toolCall) (res *Result, err error, ok bool) {
	if !c.mayWantTask(ctx, tc) {
		return nil, nil, false // a plain call goes as it always did
	}
	s, err := c.session(ctx)
	if err != nil {
		return nil, err, true
	}
	if !c.wantsTask(ctx, s, tc) {
		return nil, nil, false
	}
	res, err = c.startTask(ctx, s, tc)
	return res, err, true
}

// startTask sends tc as a task-augmented tools/call on s and follows the
// task it makes to its result.
func (c *Client) startTask(ctx context.Context, s *engine.Session, tc *toolCall) (*Result, error) {
	params := &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args}
	// The progress token lives as long as the task (see followTask).
	release := c.withProgress(ctx, params, tc.progress)
	defer release()
	inner := *tc
	inner.progress = nil // routed by the token set above
	inner.viaSDK = true  // taskwire.Middleware adds the "task" member
	// A ctx that ends before the answer ends the call at once; a task the
	// answer makes is then cancelled in the background (sendGraced).
	reply, err := c.sendGraced(taskwire.WithAsk(ctx, c.opts.Tasks.ttl()), s, &inner, params, c.opts.Timeout)
	if err != nil {
		return refusal(tc.tool, err)
	}
	var raw json.RawMessage
	if reply.Raw != nil {
		raw, _ = reply.Raw.Result()
	}
	st, proto, isTask, err := taskCreated(raw)
	switch {
	case err != nil:
		return nil, &ContentError{Server: c.name, Tool: tc.tool, Index: -1, Err: err}
	case !isTask:
		// The server ran the call at once: its result is the result.
		if raw == nil && len(reply.Content) == 0 {
			return nil, &ContentError{Server: c.name, Tool: tc.tool, Index: -1,
				Err: errors.New("asked for a task, the server's answer could not be read (the result as sent was not seen)")}
		}
		return convertResult(c.name, tc.tool, reply)
	}
	h := &TaskHandle{Server: c.name, Tool: tc.tool, ModelTool: tc.modelName, TaskID: st.TaskID, Protocol: proto, Principal: principalOf(ctx)}
	return c.followTask(ctx, tc, h, st) // a ctx that ended cancels the task at once
}

// sendTaskable sends a tools/call as sendCall does. When the server may
// answer it with a task (it and the client declare the Tasks
// extension), it is sent with sendGraced: a task made as ctx ends is
// cancelled in the background.
func (c *Client) sendTaskable(ctx context.Context, tc *toolCall, params *mcp.CallToolParams, timeout time.Duration) (*callReply, error) {
	if c.opts.Tasks != nil && c.opts.Tasks.Mode == TaskNever {
		return c.sendCall(ctx, tc, params, timeout)
	}
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	if !s.Discover() || s.SDK().InitializeResult().Capabilities == nil || s.SDK().InitializeResult().Capabilities.Extensions[taskwire.Extension] == nil {
		return c.sendCall(ctx, tc, params, timeout)
	}
	return c.sendGraced(ctx, s, tc, params, timeout)
}

// taskReply reports whether a tools/call answer is a task the server
// made on its own (the 2026-07-28 extension), and follows it to its
// result if so.
func (c *Client) taskReply(ctx context.Context, tc *toolCall, reply *callReply) (res *Result, err error, ok bool) {
	if reply == nil || reply.Raw == nil {
		return nil, nil, false
	}
	if _, plain := reply.Raw.(engine.PlainResult); plain {
		return nil, nil, false // no task: the fast path's decoder saw every member
	}
	raw, _ := reply.Raw.Result()
	st, proto, isTask, err := taskCreated(raw)
	if !isTask {
		return nil, nil, false
	}
	if err != nil {
		return nil, &ContentError{Server: c.name, Tool: tc.tool, Index: -1, Err: err}, true
	}
	h := &TaskHandle{Server: c.name, Tool: tc.tool, ModelTool: tc.modelName, TaskID: st.TaskID, Protocol: proto, Principal: principalOf(ctx)}
	res, err = c.followTask(ctx, tc, h, st)
	return res, err, true
}

// ResumeTask follows a task that this or another process started (see
// CallOptions.OnTask) to its result, which it returns as Tool.Call
// would. opts may be nil; its Progress receives the task's statuses.
// The client must reach the same server: the handle's Server must be the
// client's name. The questions the task shows are asked as a call's
// are; one another process answered is not asked again once the server
// shows the answer taken (a server may acknowledge tasks/update before
// tasks/get reflects it).
func (c *Client) ResumeTask(ctx context.Context, h TaskHandle, opts *CallOptions) (*Result, error) {
	if h.TaskID == "" {
		return nil, errors.New("mcpadapter: ResumeTask: the handle has no TaskID")
	}
	name := c.nameAt(ctx)
	if h.Server != "" && h.Server != name {
		return nil, fmt.Errorf("mcpadapter: ResumeTask: the task runs on server %q, this client reaches %q", h.Server, name)
	}
	if p := principalOf(ctx); p != h.Principal {
		return nil, &ResumeDeniedError{Server: h.Server, Tool: h.Tool, Reason: DeniedPrincipal,
			Detail: fmt.Sprintf("the task was started for principal %q, the context is for %q", h.Principal, p)}
	}
	h.Server = name
	tc := &toolCall{tool: h.Tool, modelName: h.ModelTool, principal: h.Principal}
	if opts != nil {
		tc.progress, tc.meta, tc.task, tc.detach = opts.Progress, maps.Clone(opts.Meta), opts.Task, opts.Detach
	}
	st, err := c.getTask(ctx, &h)
	if err != nil {
		return c.taskEnded(ctx, &h, "tasks/get", err)
	}
	return c.followTask(ctx, tc, &h, st)
}

// followTask polls the task until it ends and returns its result. It
// tells tc.onTask about the task first, and tc.progress about every
// status it sees.
//
// A task call ends only as one of: the task completed or failed (its
// result, or an error result); the task was cancelled, by the server or
// with tasks/cancel this call sent because the caller's context ended or
// the task's questions cannot be answered (a *TaskCancelledError, or an
// error result once the server acknowledged the cancel); or the task
// was left running and the caller is told so with its handle: a
// *TaskError (ErrTaskDetached when the client was closed), an
// *InputRequiredError whose PendingCall carries the task, or a
// *TaskCancelledError whose tasks/cancel failed. No call returns while
// its task waits on the server with no one told. TestTaskEndsTold
// holds this.
func (c *Client) followTask(ctx context.Context, tc *toolCall, h *TaskHandle, st *taskState) (*Result, error) {
	return c.followTaskFrom(ctx, tc, h, st, nil)
}

// followTaskFrom is followTask for a task whose questions of round
// (nil: none) were answered. internal/taskfollow polls; what its end
// means to the call is decided here.
func (c *Client) followTaskFrom(ctx context.Context, tc *toolCall, h *TaskHandle, st *taskState, round *taskfollow.Round) (*Result, error) {
	c.log.Debug("tool call runs as a task", "tool", h.Tool, "task", h.TaskID, "protocol", h.Protocol)
	gen := c.closeGen() // before onTask, which may close the client
	if tc.onTask != nil {
		tc.onTask(*h)
	}
	f := &taskfollow.Follower{Core: h.Protocol == TaskProtocolCore, MaxRounds: inputwire.MaxAutoRounds,
		Get: func(ctx context.Context) (*taskState, error) { return c.getTask(ctx, h) },
		Update: func(ctx context.Context, responses mcp.InputResponseMap, state string) error {
			return c.updateTask(ctx, h, responses, state)
		},
		Answer:   c.taskAnswer,
		Print:    inputwire.Print,
		Report:   func(st *taskState) { c.reportTask(tc, h, st) },
		Detached: func() bool { return c.closeGen() != gen || closed(tc.detach) },
		Life: func(ctx context.Context) (<-chan struct{}, error) {
			s, err := c.session(ctx)
			if err != nil {
				return nil, err
			}
			return s.Life().Done(), nil
		},
	}
	if o := c.opts.Tasks; o != nil {
		f.MinPoll, f.MaxPoll = o.MinPoll, o.MaxPoll
	}
	e := f.Follow(ctx, st, round)
	switch e.Kind {
	case taskfollow.Outcome:
		return c.taskOutcome(ctx, h, e.State)
	case taskfollow.Cancelled:
		return nil, &TaskCancelledError{Handle: *h, StatusMessage: e.State.StatusMessage}
	case taskfollow.Ask:
		return nil, c.taskAsks(tc, h, e)
	case taskfollow.Unreadable:
		return nil, &TaskError{Handle: *h, Op: "tasks/get", Err: e.Err} // told to the caller: the handle is in the error
	case taskfollow.Abandon:
		return c.abandonTask(ctx, h, e.Err)
	}
	err := e.Err
	if e.Detached {
		if err == nil {
			err = ErrTaskDetached
		} else {
			err = fmt.Errorf("%w: %w", ErrTaskDetached, err)
		}
		err = &TaskError{Handle: *h, Op: "tasks/get", Err: err}
	}
	return c.taskEnded(ctx, h, e.Op, err)
}

// closed reports whether ch (nil: never) is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// ErrTaskDetached says a task call ended because its client was closed,
// or its CallOptions.Detach was: the task goes on on the server (over stdio, the server ended with the
// client). Its TaskError's Handle resumes it with Client.ResumeTask.
var ErrTaskDetached = errors.New("the client let go of the task while it ran (closed, or the call's Detach); the task was not cancelled (resume it with Client.ResumeTask)")

// closeGen counts the client's Close calls.
func (c *Client) closeGen() uint64 { return c.eng.Generation() }

// reportTask hands a task's status to the call's progress function.
func (c *Client) reportTask(tc *toolCall, h *TaskHandle, st *taskState) {
	c.log.Debug("task status", "tool", h.Tool, "task", h.TaskID, "status", st.Status)
	if tc.progress == nil {
		return
	}
	msg := "task " + st.Status
	if st.StatusMessage != "" {
		msg += ": " + st.StatusMessage
	}
	tc.progress(Progress{Tool: h.Tool, Message: msg, Task: &TaskProgress{Handle: *h, Status: TaskStatus(st.Status), StatusMessage: st.StatusMessage}})
}

// TaskProgress is the status of the task behind a call, on the Progress
// its Progress function receives while the task runs.
type TaskProgress struct {
	Handle        TaskHandle
	Status        TaskStatus
	StatusMessage string
}

// task is h's task, reached through c, for internal/taskfollow.
func (c *Client) task(h *TaskHandle) *taskfollow.Task {
	return &taskfollow.Task{ID: h.TaskID, Tool: h.Tool, Ext: h.Protocol == TaskProtocolExtension, Timeout: c.opts.Timeout, Log: c.log,
		Request: func(ctx context.Context, method string, timeout time.Duration) (json.RawMessage, error) {
			return c.taskRequest(ctx, h, method, nil, timeout)
		}}
}

// taskErr gives the errors of internal/taskfollow about h's task their
// public types; any other error is returned as it is.
func taskErr(h *TaskHandle, err error) error {
	switch e := err.(type) {
	case *taskfollow.LostError:
		return &TaskError{Handle: *h, Op: e.Op, Err: e.Err}
	case *taskfollow.CancelError:
		return &TaskCancelledError{Handle: *h, Requested: e.Requested, Confirmed: e.Confirmed, CancelErr: e.CancelErr, Err: e.Err}
	}
	return err
}

// getTask sends tasks/get (taskfollow.Task.Get).
func (c *Client) getTask(ctx context.Context, h *TaskHandle) (*taskState, error) {
	st, err := c.task(h).Get(ctx)
	return st, taskErr(h, err)
}

// taskEnded turns a failed tasks/* request op into the call's error: the
// context's end cancels the task; otherwise the call lets go of the task
// and the *TaskError says so, with its handle.
func (c *Client) taskEnded(ctx context.Context, h *TaskHandle, op string, err error) (*Result, error) {
	var te *TaskError
	if ctx.Err() == nil && errors.As(err, &te) {
		return nil, err
	}
	return nil, taskErr(h, c.task(h).Ended(ctx, op, err))
}

// taskOutcome fetches the result of a task that ended
// (taskfollow.Task.Outcome) and converts it.
func (c *Client) taskOutcome(ctx context.Context, h *TaskHandle, st *taskState) (*Result, error) {
	raw, refusal, err := c.task(h).Outcome(ctx, st)
	switch {
	case err != nil:
		return nil, taskErr(h, err)
	case refusal != "":
		return errorResult(refusal), nil
	}
	r, err := engine.DecodeResult(raw)
	reply, undecodable, err := engine.ReplyOf(r, asSent(raw), err)
	if err == nil {
		err = undecodable
	}
	if err != nil {
		return nil, &ContentError{Server: c.name, Tool: h.Tool, Index: -1, Err: err}
	}
	res, err := convertResult(c.name, h.Tool, reply)
	if res != nil && TaskStatus(st.Status) == TaskFailed {
		res.IsError = true
	}
	return res, err
}

// asSent is a result as sent, for convertResult.
type asSent json.RawMessage

func (a asSent) Result() (json.RawMessage, bool) { return json.RawMessage(a), len(a) > 0 }

// A tools/call the server may answer with a task (a 2026-07-28 server
// that declares the Tasks extension, or a task-augmented 2025-11-25
// call) is sent by a goroutine of its own (sendGraced). When the
// caller's context ends before the answer, the call returns at once
// with the error any call returns then, and the Client goes on waiting
// for the answer in the background, for taskfollow.Grace at most: a
// server that makes the task as the context ends still hands it over,
// and the Client cancels it with tasks/cancel. Ending the tools/call at
// once would leave that task running, known to no one. With no answer
// by then, the tools/call is abandoned (go-sdk sends
// notifications/cancelled). Client.Close ends the wait.

// background is the work a Client does after the call that began it
// returned (graceWait). Client.Close stops it and waits for it.
type background = taskfollow.Background

// sendGraced sends a tools/call as sendCall does, on a goroutine that
// outlives ctx: when ctx ends first, sendGraced returns the error a call
// returns when its context ends (a *TransportError wrapping the
// context's cause) and hands the wait for the answer to graceWait. The
// call slot is released when sendGraced returns. s is the session the
// call is for, for the error.
func (c *Client) sendGraced(ctx context.Context, s *engine.Session, tc *toolCall, params *mcp.CallToolParams, timeout time.Duration) (*callReply, error) {
	release, err := c.callSlot(ctx, params.Name)
	if err != nil {
		return nil, err
	}
	defer release()
	held := *tc // the goroutine may outlive the caller, which owns tc
	late, reply, err := taskfollow.Send(ctx, func(sctx context.Context) (*callReply, error) {
		return c.sendHeld(sctx, &held, params, timeout)
	})
	if late == nil {
		return reply, err
	}
	c.bg.Run(func(life context.Context) { c.graceWait(life, ctx, params.Name, late) })
	return nil, c.transportError(s, "tools/call", params.Name, context.Cause(ctx))
}

// graceWait waits for the answer to a tools/call whose caller's context
// (callCtx) ended, and cancels the task the answer makes, if any, for
// the call's principal (taskfollow.CancelLate). When life ends (the
// Client was closed) the tools/call is abandoned, and a task that comes
// is let go, as Close lets go of task calls.
func (c *Client) graceWait(life, callCtx context.Context, tool string, late *taskfollow.Late[*callReply]) {
	taskfollow.CancelLate(life, callCtx, late, c.log, tool, func(r *callReply) (json.RawMessage, bool) {
		if r == nil || r.Raw == nil {
			return nil, false
		}
		if _, plain := r.Raw.(engine.PlainResult); plain {
			return nil, true // no task: the fast path's decoder saw every member
		}
		raw, _ := r.Raw.Result()
		return raw, true
	}, func(ctx context.Context, taskID string) error {
		_, err := c.taskRequest(ctx, &TaskHandle{Server: c.name, Tool: tool, TaskID: taskID}, "tasks/cancel", nil, 0)
		return err
	})
}
