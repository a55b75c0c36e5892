package gemini_test

import (
	"context"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/gemini"
	"google.golang.org/genai"
)

// finishTurn runs the function calls of one model reply, asks the user
// every question they wait on (ask returns nil when the user does not
// answer), and returns the content with their function responses.
func finishTurn(ctx context.Context, ts *gemini.Toolset, calls []gemini.Call,
	ask func(*elicitation.Interrupt) *elicitation.Resume) (*genai.Content, error) {
	outs, err := ts.Run(ctx, calls)
	for err == nil && gemini.Waiting(outs) {
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
	return gemini.UserContent(outs), nil
}
