package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 task that needs input says so in tasks/get: status
// input_required and its questions (inputRequests, as in a
// multi-round-trip result). The client answers with tasks/update and
// polls on. In ElicitInterrupt mode the questions become the same
// *InputRequiredError as a plain call's, whose PendingCall carries the
// task: Resume sends the answers. Otherwise the client's own handlers
// answer (an elicitation is declined without an ElicitationHandler).
//
// Answers are bound to the round of questions they answer, not to their
// keys for the whole task: a task may ask again under a key it used
// before, and that question is asked anew. The extension lets a server
// acknowledge tasks/update before tasks/get reflects it, so a question
// just answered may still be shown for a while; it is not asked again
// while the task shows it unchanged: same key, same question, same
// requestState and same lastUpdatedAt, the task not seen in another
// status since. A server that asks an identical question again under the
// same key, with the same requestState, without changing lastUpdatedAt
// or its status in between, cannot be told apart from one that has not
// yet taken the answer.

// taskRound is the questions of a task this call answered: the answers
// went out with tasks/update, the server may not have taken them yet.
type taskRound struct {
	updatedAt string            // the task's lastUpdatedAt when it asked them
	state     string            // the round's requestState
	asked     map[string]string // key → the question answered (questionPrint)
}

// answered reports whether st shows under key the very question r
// answered.
func (r *taskRound) answered(st *taskState, key, question string) bool {
	if r == nil {
		return false
	}
	q, ok := r.asked[key]
	return ok && q == question && r.state == st.RequestState && r.updatedAt == st.LastUpdatedAt
}

// questionPrint describes an input request for comparison: an
// elicitation as the user was shown it, anything else as sent.
func questionPrint(key string, r mcp.InputRequest) string {
	var b []byte
	if p, ok := r.(*mcp.ElicitParams); ok {
		b, _ = json.Marshal(requestFrom(key, p))
	} else {
		b, _ = json.Marshal(r)
	}
	return string(b)
}

// taskQuestions reads the questions of a task waiting for input.
func taskQuestions(h *TaskHandle, st *taskState) (mcp.InputRequestMap, error) {
	var reqs mcp.InputRequestMap
	if err := json.Unmarshal(st.InputRequests, &reqs); err != nil || len(reqs) == 0 {
		if err == nil {
			err = errors.New("no inputRequests")
		}
		return nil, &TaskError{Handle: *h, Op: "tasks/get", Err: fmt.Errorf("the task waits for input but its questions cannot be read: %w", err)}
	}
	return reqs, nil
}

// taskInput answers the questions of a task waiting for input that the
// round answered before (nil: none) did not. stop says the call ends with
// res and err (an interrupt, a failure); otherwise the answers went out,
// or had gone out before, next is the round answered, and the caller
// polls on. more says the call may answer another round: as go-sdk's
// multi-round-trip loop, a call answers a bounded number of rounds
// (maxAutoRounds), then gives the task up.
func (c *Client) taskInput(ctx context.Context, tc *toolCall, h *TaskHandle, st *taskState, round *taskRound, more bool) (res *Result, next *taskRound, err error, stop bool) {
	reqs, err := taskQuestions(h, st)
	if err != nil {
		return nil, nil, err, true // told to the caller: the handle is in the error
	}
	prints := make(map[string]string, len(reqs))
	keys := make([]string, 0, len(reqs))
	for k, r := range reqs {
		prints[k] = questionPrint(k, r)
		if !round.answered(st, k, prints[k]) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, round, nil, false // answered; the server has not taken the answers yet
	}
	if !more {
		res, err := c.abandonTask(ctx, h, fmt.Errorf("it asked for input in more than %d rounds of one call", maxAutoRounds))
		return res, nil, err, true
	}
	sort.Strings(keys)
	responses := make(mcp.InputResponseMap, len(keys))
	var asks []elicitation.Request
	for _, k := range keys {
		var resp mcp.InputResponse
		var err error
		switch r := reqs[k].(type) {
		case *mcp.ElicitParams:
			if c.interrupt != nil {
				if err = webPage(r.URL); err != nil {
					err = fmt.Errorf("it asked to send the user to %w", err)
					break
				}
				asks = append(asks, requestFrom(k, r))
				continue
			}
			resp, err = c.elicitDirect(ctx, r)
		default:
			resp, err = c.fulfill(ctx, r)
		}
		if err != nil {
			res, err := c.abandonTask(ctx, h, err)
			return res, nil, err, true
		}
		responses[k] = resp
	}
	if len(asks) > 0 {
		if len(responses) > 0 {
			res, err := c.abandonTask(ctx, h, errors.New("it asked for the user's answers and for sampling or roots at once, which this client does not support"))
			return res, nil, err, true
		}
		task := *h
		pc := c.pendingFor(tc, 0)
		pc.Requests, pc.RequestState, pc.Task = asks, st.RequestState, &task
		return nil, nil, &InputRequiredError{Pending: pc}, true
	}
	if err := c.updateTask(ctx, h, responses, st.RequestState); err != nil {
		res, err := c.taskEnded(ctx, h, "tasks/update", err)
		return res, nil, err, true
	}
	next = &taskRound{updatedAt: st.LastUpdatedAt, state: st.RequestState, asked: make(map[string]string, len(reqs))}
	if round != nil && round.updatedAt == st.LastUpdatedAt && round.state == st.RequestState {
		maps.Copy(next.asked, round.asked) // the same round, answered in parts
	}
	for k := range responses {
		next.asked[k] = prints[k]
	}
	return nil, next, nil, false
}

// abandonTask ends a call that cannot go on with its task, because the
// questions of the task cannot be answered (why): the task is cancelled
// on the server, so that it does not wait for an answer that will never
// come, and the call's result says why. A context that ended is the
// caller's cancellation (a *TaskCancelledError); a tasks/cancel that
// fails is a *TaskCancelledError that says the task may still run.
func (c *Client) abandonTask(ctx context.Context, h *TaskHandle, why error) (*Result, error) {
	if ctx.Err() != nil {
		return c.cancelTask(ctx, h)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelTimeout)
	defer cancel()
	_, err := c.taskRequest(cctx, h, "tasks/cancel", nil, 0)
	c.log.Debug("task abandoned", "tool", h.Tool, "task", h.TaskID, "cause", why, "acknowledged", err == nil)
	if err != nil {
		return nil, &TaskCancelledError{Handle: *h, Requested: true, CancelErr: err, Err: why}
	}
	return errorResult(fmt.Sprintf("Tool %q needs input this client cannot give: %v. Its task was cancelled.", h.Tool, why)), nil
}

// elicitDirect answers an elicitation with the client's handler, or
// declines it without one.
func (c *Client) elicitDirect(ctx context.Context, p *mcp.ElicitParams) (mcp.InputResponse, error) {
	if c.opts.ElicitationHandler == nil {
		return &mcp.ElicitResult{Action: string(elicitation.Decline)}, nil
	}
	return c.opts.ElicitationHandler(ctx, &mcp.ElicitRequest{Params: p})
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
	round, ok := stillAsks(&h, st, pending)
	if !ok {
		return c.followTask(ctx, tc, &h, st)
	}
	responses := make(mcp.InputResponseMap, len(answers))
	for k, a := range answers {
		responses[k] = &mcp.ElicitResult{Action: string(a.Action), Content: a.Content}
	}
	if err := c.updateTask(ctx, &h, responses, pending.RequestState); err != nil {
		return c.taskEnded(ctx, &h, "tasks/update", err)
	}
	if st, err = c.getTask(ctx, &h); err != nil {
		return c.taskEnded(ctx, &h, "tasks/get", err)
	}
	return c.followTaskFrom(ctx, tc, &h, st, round)
}

// stillAsks reports whether st shows every question of pending, and
// returns them as the round its answers answer.
func stillAsks(h *TaskHandle, st *taskState, pending *PendingCall) (*taskRound, bool) {
	if TaskStatus(st.Status) != TaskInputRequired {
		return nil, false
	}
	reqs, err := taskQuestions(h, st)
	if err != nil {
		return nil, false
	}
	round := &taskRound{updatedAt: st.LastUpdatedAt, state: st.RequestState, asked: make(map[string]string, len(pending.Requests))}
	for _, q := range pending.Requests {
		r, ok := reqs[q.Key]
		if !ok {
			return nil, false
		}
		shown := questionPrint(q.Key, r)
		if b, _ := json.Marshal(q); string(b) != shown {
			return nil, false
		}
		round.asked[q.Key] = shown
	}
	return round, true
}
