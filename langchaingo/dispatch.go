package langchaingo

import (
	"context"
	"fmt"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/toolcall"
	"github.com/tmc/langchaingo/llms"
)

// An Outcome is what one tool call came to: one of Result
// (the tool's result; IsError for a tool error the model reads), Pending
// (the server asked the user something, with mcpadapter.ElicitInterrupt:
// ask, then Resume) and Err (a transport failure: the model cannot act on
// it) is set. Its fields are those of [toolcall.Outcome].
// Result.Artifact holds the structured content.
type Outcome toolcall.Outcome[llms.ToolCall]

// A CallError is a tool call whose tool could not be reached.
type CallError struct {
	Call llms.ToolCall
	Err  error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("langchaingo: tool call %s (%s): %v", e.Call.ID, callName(e.Call), e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

func newCallError(c llms.ToolCall, err error) error { return &CallError{Call: c, Err: err} }

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
	outs := toolcall.RunTurn(ctx, calls, s.maxParallel, s.call)
	return toolcall.Outcomes[Outcome](outs), toolcall.Failures(outs, newCallError)
}

func (s *Toolset) call(ctx context.Context, c llms.ToolCall) (*mcpadapter.Result, error) {
	if c.FunctionCall == nil || (c.Type != "" && c.Type != "function") {
		return modelError(fmt.Sprintf("tool call %s: not a function call", c.ID)), nil
	}
	t := s.byName[c.FunctionCall.Name]
	if t == nil {
		return modelError(fmt.Sprintf("unknown tool %q", c.FunctionCall.Name)), nil
	}
	args, bad := t.arguments(c.FunctionCall.Arguments)
	if bad != nil {
		return bad, nil
	}
	return t.mcp.CallWith(ctx, args, t.callOptions())
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
	out, err := toolcall.Resume(ctx, t.mcp, o.Call, o.Pending, answers, newCallError)
	return Outcome(out), err
}

// ResumeTurn resumes the pending outcomes of one turn at once, each with
// the answers to its questions, answers[o.Pending.ID] (no entry: not
// answered this time, it stays pending), and returns the turn's outcomes
// in order. A call queued behind another call's question asks nothing
// (o.Pending.Asks() is false) and runs once that question is answered.
// While Waiting(outs), some outcome asks the user something; see
// docs/human-in-the-loop.md for the loop. The error joins the
// CallErrors of the turn's transport failures.
func (s *Toolset) ResumeTurn(ctx context.Context, outs []Outcome, answers map[string]*elicitation.Resume) ([]Outcome, error) {
	return toolcall.ResumeOutcomes(ctx, outs, answers, s.resumeCall, newCallError)
}

func (s *Toolset) resumeCall(ctx context.Context, c llms.ToolCall, p *mcpadapter.PendingCall, answers *elicitation.Resume) (*mcpadapter.Result, error) {
	e := s.byName[callName(c)]
	if e == nil {
		return nil, fmt.Errorf("langchaingo: unknown tool %q", callName(c))
	}
	return e.mcp.Resume(ctx, p, answers)
}

// Waiting reports whether a call of outs waits for the user's answers
// (Outcome.Pending set): then resume the turn with ResumeTurn.
func Waiting(outs []Outcome) bool { return toolcall.WaitingOutcomes(outs) }

// Text renders the outcome as the text the model reads: the tool's text
// (images and audio described), "Error: ..." for a tool error.
func (o Outcome) Text() string {
	if o.Err != nil || o.Pending != nil {
		return "Error: " + toolcall.Outcome[llms.ToolCall](o).Text()
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
