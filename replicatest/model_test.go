package replicatest

import (
	"context"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter/eino"
)

// scripted is the one fake allowed: a chat model that asks for the tool
// calls of rounds[k] on its k-th turn and then answers with what the tools
// said.
type scripted struct {
	rounds [][]schema.ToolCall
}

func (m *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

func (m *scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	turn := 0
	var said []string
	for _, msg := range in {
		switch msg.Role {
		case schema.Assistant:
			turn++
		case schema.Tool:
			said = append(said, msg.ToolName+": "+msg.Content)
		}
	}
	if turn < len(m.rounds) {
		return schema.AssistantMessage("", m.rounds[turn]), nil
	}
	return schema.AssistantMessage("final: "+strings.Join(said, " | "), nil), nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// bookRound is the model's one tool call: book a table on Sunday.
func bookRound() []schema.ToolCall {
	return []schema.ToolCall{{ID: "c1", Type: "function", Function: schema.FunctionCall{Name: "book", Arguments: `{"date":"Sun"}`}}}
}

// outcome is what a run's events said.
type outcome struct {
	Final      string
	Err        string
	Interrupts []eino.Pending
}

func drain(it *adk.AsyncIterator[*adk.AgentEvent]) outcome {
	var o outcome
	for {
		ev, ok := it.Next()
		if !ok {
			return o
		}
		if ev.Err != nil {
			o.Err = ev.Err.Error()
			continue
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			if msg, err := ev.Output.MessageOutput.GetMessage(); err == nil && msg.Role == schema.Assistant && msg.Content != "" {
				o.Final = msg.Content
			}
		}
		if p := eino.Interrupts(ev); p != nil {
			o.Interrupts = p
		}
	}
}
