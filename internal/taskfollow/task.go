package taskfollow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CancelTimeout bounds the tasks/cancel sent when a call ends.
const CancelTimeout = 5 * time.Second

// Task is one task a server made for a tool call, reached through the
// function its caller gives: its state (Get), its result once it ended
// (Outcome), and its cancel when the call cannot go on (Cancel, Abandon,
// Ended). What each ending means to the call's caller is the root's: it
// reads the *LostError and *CancelError these return.
type Task struct {
	// ID is the server's id of the task; Tool the server's name of the
	// tool called, for the log.
	ID, Tool string
	// Ext says the task was made with the Tasks extension of 2026-07-28,
	// whose tasks/get carries its result; else tasks/result fetches it.
	Ext bool
	// Request sends one tasks/* request about the task and returns its
	// result as sent; timeout bounds it (zero: only ctx does).
	Request func(ctx context.Context, method string, timeout time.Duration) (json.RawMessage, error)
	// Timeout bounds tasks/get.
	Timeout time.Duration
	Log     *slog.Logger
}

// LostError is the error of a task call that lets go of its task (the
// root's TaskError): the request Op failed, or its answer cannot be
// read. The task may still run.
type LostError struct {
	Op  string
	Err error
}

func (e *LostError) Error() string { return e.Op + ": " + e.Err.Error() }

func (e *LostError) Unwrap() error { return e.Err }

// CancelError is the error of a task call that ended cancelled (the
// root's TaskCancelledError): Requested when the call sent tasks/cancel,
// Confirmed when the server acknowledged it (else CancelErr says why
// not); Err is why the call ended.
type CancelError struct {
	Requested, Confirmed bool
	CancelErr            error
	Err                  error
}

func (e *CancelError) Error() string {
	return fmt.Sprintf("task cancelled (requested %v, confirmed %v, cancel error %v): %v", e.Requested, e.Confirmed, e.CancelErr, e.Err)
}

func (e *CancelError) Unwrap() error { return e.Err }

// Get sends tasks/get. An answer that cannot be read, or that describes
// another task (whose status, questions or result are never taken for
// this one's), is a *LostError.
func (t *Task) Get(ctx context.Context) (*taskwire.State, error) {
	raw, err := t.Request(ctx, "tasks/get", t.Timeout)
	if err != nil {
		return nil, err
	}
	st, err := taskwire.Read(raw)
	if err != nil {
		return nil, &LostError{Op: "tasks/get", Err: fmt.Errorf("unreadable answer: %w", err)}
	}
	if st.TaskID != t.ID {
		return nil, &LostError{Op: "tasks/get", Err: fmt.Errorf("the server answered with the state of task %q", st.TaskID)}
	}
	return st, nil
}

// Ended is the error of a call whose tasks/* request op failed with err:
// the end of the call's context cancels the task (Cancel); otherwise the
// call lets go of the task, a *LostError.
func (t *Task) Ended(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return t.Cancel(ctx)
	}
	return &LostError{Op: op, Err: err}
}

// Cancel sends tasks/cancel for a call whose context ended, with a
// deadline of its own (CancelTimeout), and returns the call's
// *CancelError, which says how it went.
func (t *Task) Cancel(ctx context.Context) error {
	err := t.cancel(ctx)
	t.Log.Debug("task cancelled", "tool", t.Tool, "task", t.ID, "acknowledged", err == nil)
	return &CancelError{Requested: true, Confirmed: err == nil, CancelErr: err, Err: context.Cause(ctx)}
}

// cancel sends tasks/cancel with the values of ctx (the call's identity)
// but not its end, within CancelTimeout.
func (t *Task) cancel(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CancelTimeout)
	defer cancel()
	_, err := t.Request(cctx, "tasks/cancel", 0)
	return err
}

// Abandon ends a call that cannot go on with its task because the
// task's questions cannot be answered (why): the task is cancelled on
// the server, so that it does not wait for an answer that will never
// come, and refusal is the text of the call's error result. A context
// that ended is the caller's cancellation (Cancel); a tasks/cancel that
// fails is a *CancelError that says the task may still run.
func (t *Task) Abandon(ctx context.Context, why error) (refusal string, _ error) {
	if ctx.Err() != nil {
		return "", t.Cancel(ctx)
	}
	err := t.cancel(ctx)
	t.Log.Debug("task abandoned", "tool", t.Tool, "task", t.ID, "cause", why, "acknowledged", err == nil)
	if err != nil {
		return "", &CancelError{Requested: true, CancelErr: err, Err: why}
	}
	return fmt.Sprintf("Tool %q needs input this client cannot give: %v. Its task was cancelled.", t.Tool, why), nil
}

// Outcome fetches the result of a task that ended, in state st (or, with
// 2025-11-25, one that waits for input: tasks/result carries the
// server's questions to the client's elicitation handler): the result as
// sent, or refusal, the text of the error result of a task that failed
// without one, or the call's error (Ended, Cancel, a *LostError).
func (t *Task) Outcome(ctx context.Context, st *taskwire.State) (raw json.RawMessage, refusal string, _ error) {
	didFail := st.Status == failed
	if t.Ext {
		switch {
		case st.Error != nil:
			return nil, fmt.Sprintf("Tool %q failed: %s (MCP error %d)", t.Tool, st.Error.Message, st.Error.Code), nil
		case len(st.Result) == 0 && didFail:
			msg := st.StatusMessage
			if msg == "" {
				msg = "the task failed"
			}
			return nil, fmt.Sprintf("Tool %q failed: %s", t.Tool, msg), nil
		case len(st.Result) == 0:
			return nil, "", &LostError{Op: "tasks/get", Err: errors.New("the completed task carries no result")}
		}
		return st.Result, "", nil
	}
	// tasks/result waits for the task: no request timeout.
	raw, err := t.Request(ctx, "tasks/result", 0)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", t.Cancel(ctx)
		}
		var we *jsonrpc.Error
		if sdkerr.IsServerError(err) && errors.As(err, &we) && didFail {
			return nil, fmt.Sprintf("Tool %q failed: %s (MCP error %d)", t.Tool, we.Message, we.Code), nil
		}
		return nil, "", t.Ended(ctx, "tasks/result", err)
	}
	return raw, "", nil
}
