package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxShed is how many times in a row a call is sent again when a
// 2026-07-28 server answers input_required with no questions (load
// shedding).
const maxShed = 3

// maxAutoRounds is how many rounds of one call the client answers by
// itself (sampling, roots) before it gives up, as go-sdk's own
// multi-round-trip loop does.
const maxAutoRounds = 10

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
			if shed >= maxShed {
				return nil, c.transportError(nil, "tools/call", pc.Tool, errors.New("the server kept asking to retry (load shedding)"))
			}
			shed++
			if err := sleepCtx(ctx, time.Duration(100*shed)*time.Millisecond); err != nil {
				return nil, c.transportError(nil, "tools/call", pc.Tool, fmt.Errorf("waiting to retry after the server shed load: %w", err))
			}
			continue
		}
		shed = 0
		next := pc.next()
		next.RequestState = res.RequestState
		auto := make(mcp.InputResponseMap)
		keys := make([]string, 0, len(res.InputRequests))
		for k := range res.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch r := res.InputRequests[k].(type) {
			case *mcp.ElicitParams:
				if err := webPage(r.URL); err != nil {
					return notAWebPage(pc.Tool, err), nil
				}
				next.Requests = append(next.Requests, requestFrom(k, r))
			default:
				// Sampling and roots stay with the client's own handlers.
				resp, err := c.fulfill(ctx, r)
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

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
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
		var data struct {
			Elicitations []*mcp.ElicitParams `json:"elicitations"`
		}
		if json.Unmarshal(we.Data, &data) == nil && len(data.Elicitations) > 0 {
			next := pc.next()
			next.Retry = true
			for i, e := range data.Elicitations {
				if err := webPage(e.URL); err != nil {
					return notAWebPage(pc.Tool, err), nil
				}
				key := e.ElicitationID
				if key == "" {
					key = fmt.Sprintf("url-%d", i+1)
				}
				next.Requests = append(next.Requests, requestFrom(key, e))
			}
			return nil, &InputRequiredError{Pending: next}
		}
	}
	return refusal(pc.Tool, err)
}

// fulfill answers a non-elicitation input request with the client's own
// handlers.
func (c *Client) fulfill(ctx context.Context, r mcp.InputRequest) (mcp.InputResponse, error) {
	switch r := r.(type) {
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.CreateMessageParams:
		if c.opts.SamplingHandler == nil {
			return nil, errors.New("the server asked for sampling and no SamplingHandler is set")
		}
		return c.opts.SamplingHandler(ctx, &mcp.CreateMessageRequest{Params: r})
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.CreateMessageWithToolsParams:
		// go-sdk reads every sampling request of a round or a task as this.
		if c.opts.SamplingHandler == nil {
			return nil, errors.New("the server asked for sampling and no SamplingHandler is set")
		}
		p, err := samplingBase(r)
		if err != nil {
			return nil, err
		}
		return c.opts.SamplingHandler(ctx, &mcp.CreateMessageRequest{Params: p})
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.ListRootsParams:
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
		return &mcp.ListRootsResult{Roots: c.opts.Roots}, nil
	default:
		return nil, fmt.Errorf("unsupported input request %T", r)
	}
}

// samplingBase is p for a SamplingHandler, as go-sdk gives a sampling
// request to its CreateMessageHandler: a message of several content
// blocks cannot be given; tools are left out.
//
//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
func samplingBase(p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageParams, error) {
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	msgs := make([]*mcp.SamplingMessage, 0, len(p.Messages))
	for _, m := range p.Messages {
		if len(m.Content) > 1 {
			return nil, fmt.Errorf("the server's sampling request has a message of %d content blocks, which SamplingHandler cannot be given", len(m.Content))
		}
		var content mcp.Content
		if len(m.Content) > 0 {
			content = m.Content[0]
		}
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
		msgs = append(msgs, &mcp.SamplingMessage{Content: content, Role: m.Role})
	}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	return &mcp.CreateMessageParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs,
		Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt,
		Temperature: p.Temperature}, nil
}

// requestFrom describes a server's elicitation as a Request.
func requestFrom(key string, p *mcp.ElicitParams) elicitation.Request {
	r := elicitation.Request{Key: key, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID, Mode: elicitation.ModeForm}
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		r.Mode = elicitation.ModeURL
	}
	if p.RequestedSchema != nil {
		if b, err := json.Marshal(p.RequestedSchema); err == nil {
			r.RequestedSchema = b
		}
	}
	return r
}

// webPage checks a URL a server asks the user to visit. An application
// shows it as a link, so only a web page (http or https, with a host) is
// put to the user: never a javascript:, file: or data: URL. "" is fine
// (no URL).
func webPage(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		scheme, _, _ := strings.Cut(raw, ":")
		return fmt.Errorf("a %q URL, which is not a web page (http or https with a host)", scheme)
	}
	return nil
}

// notAWebPage is the result of a call whose server asked the user to
// visit a URL that webPage refused.
func notAWebPage(tool string, err error) *Result {
	return errorResult(fmt.Sprintf("Tool %q asked to send the user to %v; the call was not continued.", tool, err))
}
