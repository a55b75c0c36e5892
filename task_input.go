package mcpadapter

import (
	"context"
	"fmt"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/taskfollow"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 task that needs input says so in tasks/get: status
// input_required and its questions (inputRequests, as in a
// multi-round-trip result). The client answers with tasks/update and
// polls on (internal/taskfollow). In ElicitInterrupt mode the questions
// become the same *InputRequiredError as a plain call's, whose
// PendingCall carries the task: Resume sends the answers. Otherwise the
// client's own handlers answer (an elicitation is declined without an
// ElicitationHandler). A question just answered is not asked again while
// the task shows it unchanged (taskfollow.Round, taskfollow.StillAsks).

// taskAnswer answers the question of a task under key: in ElicitInterrupt
// mode an elicitation is put to the user (ask), else the client's
// handlers answer.
func (c *Client) taskAnswer(ctx context.Context, key string, r mcp.InputRequest) (resp mcp.InputResponse, ask bool, err error) {
	p, ok := r.(*mcp.ElicitParams)
	switch {
	case ok && c.interrupt != nil:
		if err := inputwire.WebPage(p.URL); err != nil {
			return nil, false, fmt.Errorf("it asked to send the user to %w", err)
		}
		return nil, true, nil
	case ok:
		resp, err = c.elicitDirect(ctx, key, p)
	default:
		resp, err = inputwire.Fulfill(ctx, nil, r, c.opts.SamplingHandler, c.opts.Roots)
	}
	return resp, false, err
}

// taskAsks is the interrupt of a task call whose task asks the user e's
// questions.
func (c *Client) taskAsks(tc *toolCall, h *TaskHandle, e taskfollow.End) error {
	asks := make([]elicitation.Request, 0, len(e.Asks))
	for _, k := range e.Asks {
		asks = append(asks, inputwire.Request(k, e.Questions[k].(*mcp.ElicitParams)))
	}
	task := *h
	pc := c.pendingFor(tc, 0)
	pc.Requests, pc.RequestState, pc.Task = asks, e.State.RequestState, &task
	return &InputRequiredError{Pending: pc}
}

// abandonTask ends a call that cannot go on with its task, because the
// questions of the task cannot be answered (why): the task is cancelled
// on the server and the call's result says why (taskfollow.Task.Abandon).
func (c *Client) abandonTask(ctx context.Context, h *TaskHandle, why error) (*Result, error) {
	refusal, err := c.task(h).Abandon(ctx, why)
	if err != nil {
		return nil, taskErr(h, err)
	}
	return errorResult(refusal), nil
}

// elicitDirect answers an elicitation under key with the client's
// handler, checked as a round's is (inputwire.Elicit), or declines it
// without one.
func (c *Client) elicitDirect(ctx context.Context, key string, p *mcp.ElicitParams) (mcp.InputResponse, error) {
	if c.opts.ElicitationHandler == nil {
		return &mcp.ElicitResult{Action: string(elicitation.Decline)}, nil
	}
	return inputwire.Elicit(ctx, inputwire.RecoveredElicitation(c.log, c.opts.ElicitationHandler), nil, key, p)
}

// updateTask sends tasks/update with the answers.
func (c *Client) updateTask(ctx context.Context, h *TaskHandle, responses mcp.InputResponseMap, state string) error {
	_, err := c.taskRequest(ctx, h, "tasks/update", &taskwire.Params{InputResponses: responses, RequestState: state}, c.opts.Timeout)
	return err
}

// resumeTaskInput continues a task call interrupted for input: it sends
// the answers and follows the task on. The task is asked first: answers
// to questions it no longer shows (answered from another process, or
// the task moved on) are not sent, and the task is followed from where
// it is.
func (c *Client) resumeTaskInput(ctx context.Context, pending *PendingCall, answers map[string]elicitation.Response, tc *toolCall) (*Result, error) {
	h := *pending.Task
	h.Server = c.name
	st, err := c.getTask(ctx, &h)
	if err != nil {
		return c.taskEnded(ctx, &h, "tasks/get", err)
	}
	round, ok := taskfollow.StillAsks(st, pending.Requests)
	if !ok {
		return c.followTask(ctx, tc, &h, st)
	}
	if err := c.updateTask(ctx, &h, inputwire.Responses(answers), pending.RequestState); err != nil {
		return c.taskEnded(ctx, &h, "tasks/update", err)
	}
	if st, err = c.getTask(ctx, &h); err != nil {
		return c.taskEnded(ctx, &h, "tasks/get", err)
	}
	return c.followTaskFrom(ctx, tc, &h, st, round)
}
