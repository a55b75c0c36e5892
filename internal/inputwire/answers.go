package inputwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request describes a server's elicitation, under key, as the
// elicitation.Request a user is shown.
func Request(key string, p *mcp.ElicitParams) elicitation.Request {
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

// Print describes an input request for comparison: an elicitation as the
// user was shown it (Request), anything else as sent.
func Print(key string, r mcp.InputRequest) string {
	var b []byte
	if p, ok := r.(*mcp.ElicitParams); ok {
		b, _ = json.Marshal(Request(key, p))
	} else {
		b, _ = json.Marshal(r)
	}
	return string(b)
}

// Responses are a user's answers as the server takes them.
func Responses(answers map[string]elicitation.Response) mcp.InputResponseMap {
	out := make(mcp.InputResponseMap, len(answers))
	for k, a := range answers {
		out[k] = &mcp.ElicitResult{Action: string(a.Action), Content: a.Content}
	}
	return out
}

// Summary is the action of a set of answers: cancel if any cancels,
// decline if any declines, else accept ("resumed" for none: a queued
// call).
func Summary(answers map[string]elicitation.Response) elicitation.Action {
	switch {
	case len(answers) == 0:
		return "resumed"
	case Any(answers, elicitation.Cancel):
		return elicitation.Cancel
	case Any(answers, elicitation.Decline):
		return elicitation.Decline
	}
	return elicitation.Accept
}

// Any reports whether one of answers is a.
func Any(answers map[string]elicitation.Response, a elicitation.Action) bool {
	for _, r := range answers {
		if r.Action == a {
			return true
		}
	}
	return false
}

// All reports whether every one of answers is a.
func All(answers map[string]elicitation.Response, a elicitation.Action) bool {
	for _, r := range answers {
		if r.Action != a {
			return false
		}
	}
	return true
}

// Fulfill answers an input request that is not an elicitation with a
// client's own handler of sampling requests (nil: none) and its roots.
//
//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
func Fulfill(ctx context.Context, r mcp.InputRequest, sampling func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error), roots []*mcp.Root) (mcp.InputResponse, error) {
	switch r := r.(type) {
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.CreateMessageParams:
		if sampling == nil {
			return nil, errors.New("the server asked for sampling and no SamplingHandler is set")
		}
		return sampling(ctx, &mcp.CreateMessageRequest{Params: r})
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.CreateMessageWithToolsParams:
		// go-sdk reads every sampling request of a round or a task as this.
		if sampling == nil {
			return nil, errors.New("the server asked for sampling and no SamplingHandler is set")
		}
		p, err := SamplingBase(r)
		if err != nil {
			return nil, err
		}
		return sampling(ctx, &mcp.CreateMessageRequest{Params: p})
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.ListRootsParams:
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
		return &mcp.ListRootsResult{Roots: roots}, nil
	default:
		return nil, fmt.Errorf("unsupported input request %T", r)
	}
}
