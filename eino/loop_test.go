package eino_test

import (
	"context"
	"errors"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/elicitation"
)

// runWithUser runs one user message and answers every question the run
// stops at with ask, until the run ends; it returns the agent's answer.
func runWithUser(ctx context.Context, agent *eino.Agent, checkpointID, message string,
	ask func(*elicitation.Interrupt) *elicitation.Resume) (string, error) {
	events := agent.Query(ctx, checkpointID, message)
	for {
		var answer string
		var pending []eino.Pending
		stopped := false
		for {
			ev, ok := events.Next()
			if !ok {
				break
			}
			if ev.Err != nil {
				return "", ev.Err
			}
			if ev.Output != nil && ev.Output.MessageOutput != nil {
				if msg, err := ev.Output.MessageOutput.GetMessage(); err == nil && msg.Role == schema.Assistant {
					answer = msg.Content
				}
			}
			if ev.Action != nil && ev.Action.Interrupted != nil {
				stopped = true
				pending = append(pending, eino.Interrupts(ev)...)
			}
		}
		if !stopped {
			return answer, nil
		}
		if len(pending) == 0 {
			return "", errors.New("the run stopped with no question to answer")
		}
		answers := make(map[string]*elicitation.Resume, len(pending))
		for _, p := range pending {
			answers[p.ID] = ask(p.Interrupt)
		}
		var err error
		if events, err = agent.Resume(ctx, checkpointID, answers); err != nil {
			return "", err
		}
	}
}
