package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/tmc/langchaingo/llms"
)

// An Outcome is what one tool call came to.
type Outcome struct {
	Call llms.ToolCall
	// Result is the tool's result (IsError for a tool error the model
	// reads; Artifact for the structured content); nil when Pending or
	// Err is set.
	Result *mcpadapter.Result
	// Pending is set when the server asked the user something
	// (elicitation with mcpadapter.ElicitInterrupt): ask, then Resume.
	Pending *mcpadapter.PendingCall
	// Err is a transport failure: the model cannot act on it.
	Err error
}

// A CallError is a tool call whose tool could not be reached.
type CallError struct {
	Call llms.ToolCall
	Err  error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("langchaingo: tool call %s (%s): %v", e.Call.ID, callName(e.Call), e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

func callName(c llms.ToolCall) string {
	if c.FunctionCall == nil {
		return ""
	}
	return c.FunctionCall.Name
}

// Run runs one turn's tool calls (llms.ContentChoice.ToolCalls), at most
// MaxParallel at once, and returns one Outcome per call in the same
// order. The error joins the CallErrors of transport failures; the other
// outcomes are complete.
func (s *Toolset) Run(ctx context.Context, calls []llms.ToolCall) ([]Outcome, error) {
	outs := make([]Outcome, len(calls))
	sem := make(chan struct{}, s.maxParallel)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				outs[i] = Outcome{Call: c, Err: ctx.Err()}
				return
			}
			defer func() { <-sem }()
			outs[i] = s.run(ctx, c)
		}()
	}
	wg.Wait()
	var errs []error
	for _, o := range outs {
		if o.Err != nil {
			errs = append(errs, &CallError{Call: o.Call, Err: o.Err})
		}
	}
	return outs, errors.Join(errs...)
}

func (s *Toolset) run(ctx context.Context, c llms.ToolCall) Outcome {
	if c.FunctionCall == nil || (c.Type != "" && c.Type != "function") {
		return Outcome{Call: c, Result: modelError(fmt.Sprintf("tool call %s: not a function call", c.ID))}
	}
	t := s.byName[c.FunctionCall.Name]
	if t == nil {
		return Outcome{Call: c, Result: modelError(fmt.Sprintf("unknown tool %q", c.FunctionCall.Name))}
	}
	args, bad := t.arguments(c.FunctionCall.Arguments)
	if bad != nil {
		return Outcome{Call: c, Result: bad}
	}
	res, err := t.mcp.Call(ctx, args)
	return outcome(c, res, err)
}

func outcome(c llms.ToolCall, res *mcpadapter.Result, err error) Outcome {
	var ire *mcpadapter.InputRequiredError
	switch {
	case errors.As(err, &ire):
		return Outcome{Call: c, Pending: ire.Pending}
	case err != nil:
		return Outcome{Call: c, Err: err}
	}
	return Outcome{Call: c, Result: res}
}

// Resume answers a pending outcome's question and finishes its call; the
// result may be pending again (another question).
func (s *Toolset) Resume(ctx context.Context, o Outcome, answers *elicitation.Resume) (Outcome, error) {
	if o.Pending == nil {
		return o, fmt.Errorf("langchaingo: tool call %s (%s) is not pending", o.Call.ID, callName(o.Call))
	}
	t := s.byName[callName(o.Call)]
	if t == nil {
		return o, fmt.Errorf("langchaingo: tool call %s: unknown tool %q", o.Call.ID, callName(o.Call))
	}
	res, err := t.mcp.Resume(ctx, o.Pending, answers)
	out := outcome(o.Call, res, err)
	if out.Err != nil {
		return out, &CallError{Call: o.Call, Err: out.Err}
	}
	return out, nil
}

// Text renders the outcome as the text the model reads: the tool's text
// (images and audio described), "Error: ..." for a tool error.
func (o Outcome) Text() string {
	switch {
	case o.Err != nil:
		return "Error: the tool could not be reached: " + o.Err.Error()
	case o.Pending != nil:
		return "Error: the tool is waiting for the user's answer"
	}
	return resultText(o.Result)
}

// Response returns the outcome as an llms.ToolCallResponse.
func (o Outcome) Response() llms.ToolCallResponse {
	return llms.ToolCallResponse{ToolCallID: o.Call.ID, Name: callName(o.Call), Content: o.Text()}
}

// Message returns the tool message for the outcome (role tool, one
// ToolCallResponse part: langchaingo's backends read one per message).
func (o Outcome) Message() llms.MessageContent {
	return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{o.Response()}}
}

// AssistantMessage returns the model's turn as the message to append to
// the history before the tool messages: its text and its tool calls.
func AssistantMessage(choice *llms.ContentChoice) llms.MessageContent {
	m := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	if choice.Content != "" {
		m.Parts = append(m.Parts, llms.TextPart(choice.Content))
	}
	for _, tc := range choice.ToolCalls {
		m.Parts = append(m.Parts, tc)
	}
	return m
}
