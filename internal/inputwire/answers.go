package inputwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
// client's own handler of sampling requests (nil: none) and its roots,
// as go-sdk answers a server's sampling/createMessage and roots/list: the
// handler is given cs, the session the request came on (nil: none); a
// handler that returns no result is an error (no null answer is sent);
// no roots are an empty list.
//
//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
func Fulfill(ctx context.Context, cs *mcp.ClientSession, r mcp.InputRequest, sampling func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error), roots []*mcp.Root) (mcp.InputResponse, error) {
	switch r := r.(type) {
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.CreateMessageParams:
		return sample(ctx, cs, r, sampling)
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.CreateMessageWithToolsParams:
		// go-sdk reads every sampling request of a round or a task as this.
		if sampling == nil {
			return nil, errNoSampling
		}
		p, err := SamplingBase(r)
		if err != nil {
			return nil, err
		}
		return sample(ctx, cs, p, sampling)
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.ListRootsParams:
		if roots == nil {
			//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
			roots = []*mcp.Root{} // as go-sdk lists none: never null
		}
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
		return &mcp.ListRootsResult{Roots: roots}, nil
	default:
		return nil, fmt.Errorf("unsupported input request %T", r)
	}
}

// errNoSampling answers a sampling request of a client without a
// SamplingHandler.
var errNoSampling = errors.New("the server asked for sampling and no SamplingHandler is set")

// sample answers p with sampling, given cs; no result is an error.
//
//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
func sample(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageParams, sampling func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)) (mcp.InputResponse, error) {
	if sampling == nil {
		return nil, errNoSampling
	}
	res, err := sampling(ctx, &mcp.CreateMessageRequest{Session: cs, Params: p})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's sampling handler returned no result"}
	}
	return res, nil
}
