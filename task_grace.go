package mcpadapter

import (
	"context"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/taskfollow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
// the call's principal. When life ends (the Client was closed) the
// tools/call is abandoned, and a task that comes is let go, as Close
// lets go of task calls.
func (c *Client) graceWait(life, callCtx context.Context, tool string, late *taskfollow.Late[*callReply]) {
	a := late.Wait(life)
	if a.Err != nil || a.Reply == nil || a.Reply.Raw == nil {
		c.log.Debug("tool call abandoned after its context ended", "tool", tool, "answered", a.Err == nil)
		return
	}
	if _, plain := a.Reply.Raw.(engine.PlainResult); plain {
		return // no task: the fast path's decoder saw every member
	}
	raw, _ := a.Reply.Raw.Result()
	st, proto, isTask, err := taskCreated(raw)
	if !isTask || err != nil || TaskStatus(st.Status).Terminal() {
		return
	}
	h := &TaskHandle{Server: c.name, Tool: tool, TaskID: st.TaskID, Protocol: proto, Principal: principalOf(callCtx)}
	if life.Err() != nil {
		c.log.Debug("task made after its call ended, left running: the client was closed", "tool", tool, "task", h.TaskID)
		return
	}
	// The caller's context values (its CallIdentity) go with the cancel.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(callCtx), taskfollow.CancelTimeout)
	defer cancel()
	defer context.AfterFunc(life, cancel)()
	_, err = c.taskRequest(cctx, h, "tasks/cancel", nil, 0)
	c.log.Debug("task made after its call ended: cancelled", "tool", tool, "task", h.TaskID, "acknowledged", err == nil, "error", err)
}
