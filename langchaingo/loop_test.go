package langchaingo_test

import (
	"context"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/langchaingo"
	"github.com/tmc/langchaingo/llms"
)

// finishTurn runs one model turn's tool calls, asks the user every
// question they wait on (ask returns nil when the user does not answer),
// and returns the tool messages for the model's next request.
func finishTurn(ctx context.Context, ts *langchaingo.Toolset, calls []llms.ToolCall,
	ask func(*elicitation.Interrupt) *elicitation.Resume) ([]llms.MessageContent, error) {
	outs, err := ts.Run(ctx, calls)
	for err == nil && langchaingo.Waiting(outs) {
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
		return nil, err
	}
	msgs := make([]llms.MessageContent, 0, len(outs))
	for _, o := range outs {
		msgs = append(msgs, o.Message())
	}
	return msgs, nil
}
