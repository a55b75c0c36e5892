package genkit_test

import (
	"context"

	"github.com/firebase/genkit/go/ai"
	gk "github.com/firebase/genkit/go/genkit"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/genkit"
)

// generateWithUser answers one user prompt, asking the user every
// question the model's tool requests wait on (ask returns nil when the
// user does not answer) and restarting them with the results.
func generateWithUser(ctx context.Context, g *gk.Genkit, model ai.Model, ts *genkit.Toolset, prompt string,
	ask func(*elicitation.Interrupt) *elicitation.Resume) (*ai.ModelResponse, error) {
	ctx = mcpadapter.WithRun(ctx, mcpadapter.NewRunID()) // one user turn
	resp, err := gk.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt(prompt), ai.WithTools(ts.Refs()...))
	for err == nil && resp.FinishReason == ai.FinishReasonInterrupted {
		var restarts []*ai.Part
		pending := ts.Interrupts(resp)
		for len(pending) > 0 {
			answers := map[string]*elicitation.Resume{}
			for _, p := range pending {
				if p.Call.Asks() {
					if a := ask(p.Interrupt); a != nil {
						answers[p.Call.ID] = a
					}
				}
			}
			if len(answers) == 0 { // not answered: the model is told the calls wait
				for _, p := range pending {
					part, err := ts.Unanswered(p)
					if err != nil {
						return nil, err
					}
					restarts = append(restarts, part)
				}
				break
			}
			done, next, err := ts.ResumeAll(ctx, pending, answers)
			if err != nil {
				return nil, err
			}
			restarts, pending = append(restarts, done...), next
		}
		resp, err = gk.Generate(ctx, g, ai.WithModel(model), ai.WithMessages(resp.History()...),
			ai.WithTools(ts.Refs()...), ai.WithToolRestarts(restarts...))
	}
	return resp, err
}
