package anthropic_test

import (
	"context"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/mcpadapter/mcpadapter/anthropic"
	"github.com/mcpadapter/mcpadapter/elicitation"
)

// finishTurn runs the tool_use blocks of one model reply, asks the user
// every question they wait on (ask returns nil when the user does not
// answer), and returns the user message with their tool_result blocks.
func finishTurn(ctx context.Context, ts *anthropic.Toolset, calls []anthropic.Call,
	ask func(*elicitation.Interrupt) *elicitation.Resume) (ant.MessageParam, error) {
	outs, err := ts.Run(ctx, calls)
	for err == nil && anthropic.Waiting(outs) {
		answers := map[string]*elicitation.Resume{}
		for _, o := range outs {
			if o.Pending.Asks() {
				if a := ask(o.Pending.Interrupt()); a != nil {
					answers[o.Pending.ID] = a
				}
			}
		}
		if len(answers) == 0 {
			break // not answered: the model is told the calls wait
		}
		outs, err = ts.ResumeTurn(ctx, outs, answers)
	}
	if err != nil {
		return ant.MessageParam{}, err
	}
	return anthropic.UserMessage(outs), nil
}
