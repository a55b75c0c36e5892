package inputwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Rounds reads, round after round, the answers of one 2026-07-28 tool
// call that ask for input (input_required): a round the server shed is
// sent again after a wait, at most MaxShed times in a row; sampling and
// roots are answered by the client's own handlers, in at most
// MaxAutoRounds rounds; the user's questions end the rounds. The zero
// value has no SamplingHandler and no roots.
type Rounds struct {
	// Sampling is the client's SamplingHandler, or nil; Roots its roots.
	//
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	Sampling func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	Roots []*mcp.Root

	shed, auto int // the rounds shed in a row, and answered by the client
}

// Step is what a call does after an answer that asks for input. When
// none of its fields is set, the call is sent again as it was (the server
// shed it).
type Step struct {
	// Answers, if set, are the client's own answers: send the call again
	// with them.
	Answers mcp.InputResponseMap
	// Ask, if set, are the user's questions.
	Ask []elicitation.Request
	// Refused, if set, is the text of the error result the model reads: a
	// question the client cannot put to the user or answer.
	Refused string
	// Failed, if set, ends the call: the cause of its transport failure.
	Failed error
}

// Next reads res, the answer to a call of tool that asks for input.
func (r *Rounds) Next(ctx context.Context, tool string, res *mcp.CallToolResult) Step {
	if len(res.InputRequests) == 0 {
		// Load shedding: the server asks us to try again.
		if r.shed >= MaxShed {
			return Step{Failed: errors.New("the server kept asking to retry (load shedding)")}
		}
		r.shed++
		if err := Sleep(ctx, ShedWait(r.shed)); err != nil {
			return Step{Failed: fmt.Errorf("waiting to retry after the server shed load: %w", err)}
		}
		return Step{}
	}
	r.shed = 0
	var asks []elicitation.Request
	auto := make(mcp.InputResponseMap)
	for _, k := range Keys(res.InputRequests) {
		switch q := res.InputRequests[k].(type) {
		case *mcp.ElicitParams:
			if err := WebPage(q.URL); err != nil {
				return Step{Refused: NotAWebPage(tool, err)}
			}
			asks = append(asks, Request(k, q))
		default:
			// Sampling and roots stay with the client's own handlers.
			resp, err := Fulfill(ctx, nil, q, r.Sampling, r.Roots)
			if err != nil {
				return Step{Refused: fmt.Sprintf("Tool %q needs input this client cannot give: %v", tool, err)}
			}
			auto[k] = resp
		}
	}
	switch {
	case len(asks) == 0:
		if r.auto++; r.auto > MaxAutoRounds {
			return Step{Failed: fmt.Errorf("the server asked for sampling or roots in %d rounds of one call without finishing it", r.auto)}
		}
		return Step{Answers: auto}
	case len(auto) > 0:
		return Step{Refused: fmt.Sprintf("Tool %q asked for the user's answers and for sampling or roots in the same round, which this client does not support", tool)}
	}
	return Step{Ask: asks}
}

// URLQuestions are the questions of a -32042 (URL elicitation required)
// error's data as a user is shown them, or none (URLElicitations); err
// says why one of them cannot be put to a user (WebPage).
func URLQuestions(data json.RawMessage) ([]elicitation.Request, error) {
	keys, es := URLElicitations(data)
	asks := make([]elicitation.Request, 0, len(es))
	for i, e := range es {
		if err := WebPage(e.URL); err != nil {
			return nil, err
		}
		asks = append(asks, Request(keys[i], e))
	}
	return asks, nil
}

// NotAWebPage is the text of the error result of a call of tool whose
// server asked to send the user to a URL that WebPage refused with err.
func NotAWebPage(tool string, err error) string {
	return fmt.Sprintf("Tool %q asked to send the user to %v; the call was not continued.", tool, err)
}
