package mcpadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxAutoRounds is how many rounds of one call the client answers by
// itself (sampling, roots) before it gives up.
const maxAutoRounds = inputwire.MaxAutoRounds

// callRound makes one multi-round-trip (2026-07-28) attempt of pc with the
// given answers.
func (c *Client) callRound(ctx context.Context, pc *PendingCall, answers mcp.InputResponseMap, tc *toolCall) (*Result, error) {
	params := &mcp.CallToolParams{Name: pc.Tool, Arguments: tc.args, InputResponses: answers, RequestState: pc.RequestState}
	for shed, rounds := 0, 0; ; {
		res, err := c.sendTaskable(ctx, tc, params, c.opts.Timeout)
		if err != nil {
			return c.callFailed(pc, err)
		}
		if r, err, ok := c.taskReply(ctx, tc, res); ok { // a task the server made
			return r, err
		}
		if !res.NeedsInput() {
			return convertResult(c.name, pc.Tool, res)
		}
		if len(res.InputRequests) == 0 {
			// Load shedding: the server asks us to try again.
			if shed >= inputwire.MaxShed {
				return nil, c.transportError(nil, "tools/call", pc.Tool, errors.New("the server kept asking to retry (load shedding)"))
			}
			shed++
			if err := inputwire.Sleep(ctx, inputwire.ShedWait(shed)); err != nil {
				return nil, c.transportError(nil, "tools/call", pc.Tool, fmt.Errorf("waiting to retry after the server shed load: %w", err))
			}
			continue
		}
		shed = 0
		next := pc.next()
		next.RequestState = res.RequestState
		auto := make(mcp.InputResponseMap)
		for _, k := range inputwire.Keys(res.InputRequests) {
			switch r := res.InputRequests[k].(type) {
			case *mcp.ElicitParams:
				if err := inputwire.WebPage(r.URL); err != nil {
					return notAWebPage(pc.Tool, err), nil
				}
				next.Requests = append(next.Requests, inputwire.Request(k, r))
			default:
				// Sampling and roots stay with the client's own handlers.
				resp, err := inputwire.Fulfill(ctx, r, c.opts.SamplingHandler, c.opts.Roots)
				if err != nil {
					return errorResult(fmt.Sprintf("Tool %q needs input this client cannot give: %v", pc.Tool, err)), nil
				}
				auto[k] = resp
			}
		}
		if len(next.Requests) == 0 {
			if rounds++; rounds > maxAutoRounds {
				return nil, c.transportError(nil, "tools/call", pc.Tool, fmt.Errorf("the server asked for sampling or roots in %d rounds of one call without finishing it", rounds))
			}
			params = &mcp.CallToolParams{Name: pc.Tool, Arguments: tc.args, InputResponses: auto, RequestState: res.RequestState}
			continue
		}
		if len(auto) > 0 {
			return errorResult(fmt.Sprintf("Tool %q asked for the user's answers and for sampling or roots in the same round, which this client does not support", pc.Tool)), nil
		}
		return nil, &InputRequiredError{Pending: next}
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
		if keys, es := inputwire.URLElicitations(we.Data); len(es) > 0 {
			next := pc.next()
			next.Retry = true
			for i, e := range es {
				if err := inputwire.WebPage(e.URL); err != nil {
					return notAWebPage(pc.Tool, err), nil
				}
				next.Requests = append(next.Requests, inputwire.Request(keys[i], e))
			}
			return nil, &InputRequiredError{Pending: next}
		}
	}
	return refusal(pc.Tool, err)
}

// notAWebPage is the result of a call whose server asked the user to
// visit a URL that inputwire.WebPage refused.
func notAWebPage(tool string, err error) *Result {
	return errorResult(fmt.Sprintf("Tool %q asked to send the user to %v; the call was not continued.", tool, err))
}
