package mcpadapter

import (
	"context"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tools/call the server may answer with a task (a 2026-07-28 server
// that declares the Tasks extension, or a task-augmented 2025-11-25
// call) is sent by a goroutine of its own (sendGraced). When the
// caller's context ends before the answer, the call returns at once
// with the error any call returns then, and the Client goes on waiting
// for the answer in the background, for taskCreateGrace at most: a
// server that makes the task as the context ends still hands it over,
// and the Client cancels it with tasks/cancel. Ending the tools/call at
// once would leave that task running, known to no one. With no answer
// by then, the tools/call is abandoned (go-sdk sends
// notifications/cancelled). Client.Close ends the wait.

// taskCreateGrace is how long the answer to a tools/call that may make a
// task is still waited for, in the background, after the caller's
// context ends.
const taskCreateGrace = 2 * time.Second

// callAnswer is what sendHeld returned.
type callAnswer struct {
	reply *callReply
	err   error
}

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
	sctx, abandon := context.WithCancelCause(context.WithoutCancel(ctx))
	answer := make(chan callAnswer, 1)
	held := *tc // the goroutine may outlive the caller, which owns tc
	// The goroutine is this call's until ctx ends, then graceWait's.
	go func() {
		reply, err := c.sendHeld(sctx, &held, params, timeout)
		answer <- callAnswer{reply, err}
	}()
	select {
	case a := <-answer:
		abandon(nil)
		return a.reply, a.err
	case <-ctx.Done():
	}
	select {
	case a := <-answer: // answered as ctx ended: the caller takes it
		abandon(nil)
		return a.reply, a.err
	default:
	}
	c.bg.run(func(life context.Context) { c.graceWait(life, ctx, params.Name, answer, abandon) })
	return nil, c.transportError(s, "tools/call", params.Name, context.Cause(ctx))
}

// graceWait waits, for taskCreateGrace at most, for the answer to a
// tools/call whose caller's context (callCtx) ended, and cancels the
// task the answer makes, if any, for the call's principal. It abandons
// the tools/call when the grace ends or life does (the Client was
// closed: the task, if one comes, is let go, as Close lets go of task
// calls).
func (c *Client) graceWait(life, callCtx context.Context, tool string, answer <-chan callAnswer, abandon context.CancelCauseFunc) {
	grace := time.NewTimer(taskCreateGrace)
	defer grace.Stop()
	var a callAnswer
	select {
	case a = <-answer:
	case <-grace.C:
		abandon(context.Cause(callCtx))
		a = <-answer
	case <-life.Done():
		abandon(context.Cause(callCtx))
		a = <-answer
	}
	abandon(nil)
	if a.err != nil || a.reply == nil || a.reply.raw == nil {
		c.log.Debug("tool call abandoned after its context ended", "tool", tool, "answered", a.err == nil)
		return
	}
	if _, plain := a.reply.raw.(engine.PlainResult); plain {
		return // no task: the fast path's decoder saw every member
	}
	raw, _ := a.reply.raw.Result()
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
	cctx, cancel := context.WithTimeout(context.WithoutCancel(callCtx), taskCancelTimeout)
	defer cancel()
	defer context.AfterFunc(life, cancel)()
	_, err = c.taskRequest(cctx, h, "tasks/cancel", nil, 0)
	c.log.Debug("task made after its call ended: cancelled", "tool", tool, "task", h.TaskID, "acknowledged", err == nil, "error", err)
}

// background is the work a Client does after the call that began it
// returned (graceWait). Client.Close ends the work running then and
// waits for it; work begun later runs until the next Close.
type background struct {
	mu  sync.Mutex
	now *bgRound // nil until work begins after a Close
}

// bgRound is the work begun between two Closes.
type bgRound struct {
	life context.Context // ends on Close
	end  context.CancelFunc
	wg   sync.WaitGroup
}

// run runs f on a goroutine of b; f's context ends on Close, and f
// must return soon after.
func (b *background) run(f func(life context.Context)) {
	b.mu.Lock()
	if b.now == nil {
		r := &bgRound{}
		r.life, r.end = context.WithCancel(context.Background())
		b.now = r
	}
	r := b.now
	r.wg.Add(1)
	b.mu.Unlock()
	go func() {
		defer r.wg.Done()
		f(r.life)
	}()
}

// stop ends the work running now and returns a function that waits for
// it.
func (b *background) stop() (wait func()) {
	b.mu.Lock()
	r := b.now
	b.now = nil
	b.mu.Unlock()
	if r == nil {
		return func() {}
	}
	r.end()
	return r.wg.Wait
}
