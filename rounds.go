package mcpadapter

import (
	"context"
	"errors"

	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callRound makes one multi-round-trip (2026-07-28) attempt of pc with the
// given answers, and the rounds of the client's own answers after it
// (inputwire.Rounds).
func (c *Client) callRound(ctx context.Context, pc *PendingCall, answers mcp.InputResponseMap, tc *toolCall) (*Result, error) {
	params := &mcp.CallToolParams{Name: pc.Tool, Arguments: tc.args, InputResponses: answers, RequestState: pc.RequestState}
	rounds := inputwire.Rounds{Sampling: c.opts.SamplingHandler, Roots: c.opts.Roots}
	for {
		res, err := c.sendTaskable(ctx, tc, params, c.opts.Timeout)
		if err != nil {
			return c.callFailed(pc, err)
		}
		if r, err, ok := c.taskReply(ctx, tc, res); ok { // a task the server made
			return r, err
		}
		// A round by the client's one rule (plaincall.Round), which its
		// own loop follows too: input_required with no questions at all
		// is none (an empty list of them is load shedding).
		if _, _, round := plaincall.Round(res.CallToolResult); !round {
			return convertResult(c.name, pc.Tool, res)
		}
		switch step := rounds.Next(ctx, pc.Tool, res.CallToolResult); {
		case step.Failed != nil:
			return nil, c.transportError(nil, "tools/call", pc.Tool, step.Failed)
		case step.Refused != "":
			return errorResult(step.Refused), nil
		case step.Ask != nil:
			next := pc.next()
			next.RequestState, next.Requests = res.RequestState, step.Ask
			return nil, &InputRequiredError{Pending: next}
		case step.Answers != nil:
			params = &mcp.CallToolParams{Name: pc.Tool, Arguments: tc.args, InputResponses: step.Answers, RequestState: res.RequestState}
		}
	}
}

// callFailed turns a failed call into its result: a server refusal becomes
// an error result, except -32042 (URL elicitation required), which becomes
// questions.
func (c *Client) callFailed(pc *PendingCall, err error) (*Result, error) {
	var we *jsonrpc.Error
	if !sdkerr.IsServerError(err) || !errors.As(err, &we) {
		return nil, err
	}
	if we.Code == mcp.CodeURLElicitationRequired {
		asks, err := inputwire.URLQuestions(we.Data)
		if err != nil {
			return errorResult(inputwire.NotAWebPage(pc.Tool, err)), nil
		}
		if len(asks) > 0 {
			next := pc.next()
			next.Retry, next.Requests = true, asks
			return nil, &InputRequiredError{Pending: next}
		}
	}
	return refusal(pc.Tool, err)
}
