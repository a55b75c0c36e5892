package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 task that needs input says so in tasks/get: status
// input_required and its questions (inputRequests, as in a
// multi-round-trip result). The client answers with tasks/update and
// polls on. In ElicitInterrupt mode the questions become the same
// *InputRequiredError as a plain call's, whose PendingCall carries the
// task: Resume sends the answers. Otherwise the client's own handlers
// answer (an elicitation is declined without an ElicitationHandler).

// taskInput answers the questions of a task waiting for input. stop says
// the call ends with res and err (an interrupt, a failure); otherwise the
// answers went out, or had gone out before (answered holds their keys),
// and the caller polls on.
func (c *Client) taskInput(ctx context.Context, tc *toolCall, h *TaskHandle, st *taskState, answered map[string]bool) (res *Result, err error, stop bool) {
	var reqs mcp.InputRequestMap
	if err := json.Unmarshal(st.InputRequests, &reqs); err != nil || len(reqs) == 0 {
		if err == nil {
			err = errors.New("no inputRequests")
		}
		return nil, &TaskError{Handle: *h, Op: "tasks/get", Err: fmt.Errorf("the task waits for input but its questions cannot be read: %w", err)}, true
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		if !answered[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil, false // answered; the server has not moved on yet
	}
	sort.Strings(keys)
	responses := make(mcp.InputResponseMap, len(keys))
	var asks []elicitation.Request
	for _, k := range keys {
		switch r := reqs[k].(type) {
		case *mcp.ElicitParams:
			if c.interrupt != nil {
				asks = append(asks, requestFrom(k, r))
				continue
			}
			resp, err := c.elicitDirect(ctx, r)
			if err != nil {
				return errorResult(fmt.Sprintf("Tool %q needs input this client cannot give: %v", h.Tool, err)), nil, true
			}
			responses[k] = resp
		default:
			resp, err := c.fulfill(ctx, r)
			if err != nil {
				return errorResult(fmt.Sprintf("Tool %q needs input this client cannot give: %v", h.Tool, err)), nil, true
			}
			responses[k] = resp
		}
	}
	if len(asks) > 0 {
		if len(responses) > 0 {
			return errorResult(fmt.Sprintf("Tool %q asked for the user's answers and for sampling or roots at once, which this client does not support", h.Tool)), nil, true
		}
		task := *h
		pc := c.pendingFor(tc, 0)
		pc.Requests, pc.RequestState, pc.Task = asks, st.RequestState, &task
		return nil, &InputRequiredError{Pending: pc}, true
	}
	if err := c.updateTask(ctx, h, responses, st.RequestState); err != nil {
		res, err := c.taskEnded(ctx, h, err)
		return res, err, true
	}
	for k := range responses {
		answered[k] = true
	}
	return nil, nil, false
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
	_, err := c.taskRequest(ctx, h, "tasks/update", &taskParams{InputResponses: responses, RequestState: state}, c.opts.Timeout)
	return err
}

// resumeTaskInput continues a task call interrupted for input: it sends
// the answers and follows the task on.
func (c *Client) resumeTaskInput(ctx context.Context, pending *PendingCall, answers map[string]elicitation.Response, tc *toolCall) (*Result, error) {
	h := *pending.Task
	h.Server = c.name
	responses := make(mcp.InputResponseMap, len(answers))
	answered := make(map[string]bool, len(answers))
	for k, a := range answers {
		responses[k] = &mcp.ElicitResult{Action: string(a.Action), Content: a.Content}
		answered[k] = true
	}
	if err := c.updateTask(ctx, &h, responses, pending.RequestState); err != nil {
		return c.taskEnded(ctx, &h, err)
	}
	st, err := c.getTask(ctx, &h)
	if err != nil {
		return c.taskEnded(ctx, &h, err)
	}
	return c.followTaskAnswered(ctx, tc, &h, st, answered)
}
