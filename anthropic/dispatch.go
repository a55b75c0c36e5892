package anthropic

import (
	"context"
	"encoding/json"
	"fmt"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/toolcall"
)

// A Call is one tool_use block the model wrote.
type Call struct {
	// ID is the tool_use id the tool_result answers.
	ID string
	// Name is the tool's name.
	Name string
	// Input is the JSON object the model wrote.
	Input json.RawMessage
}

// Calls returns the tool_use blocks of an assistant message.
func Calls(msg *ant.Message) []Call {
	if msg == nil {
		return nil
	}
	var out []Call
	for _, b := range msg.Content {
		if b.Type == "tool_use" {
			out = append(out, Call{ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	return out
}

// An Outcome is what one call came to: one of Result
// (the tool's result; IsError for a tool error the model reads), Pending
// (the server asked the user something, with mcpadapter.ElicitInterrupt:
// ask, then Resume) and Err (a transport failure: the model cannot act on
// it) is set. Its fields are those of [toolcall.Outcome].
type Outcome toolcall.Outcome[Call]

// A CallError is a call whose tool could not be reached.
type CallError struct {
	Call Call
	Err  error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("anthropic: tool call %s (%s): %v", e.Call.ID, e.Call.Name, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

func newCallError(c Call, err error) error { return &CallError{Call: c, Err: err} }

// Run runs calls, at most MaxParallel at once, and returns one Outcome
// per call in the same order. The error joins the CallErrors of
// transport failures; the other outcomes are complete.
func (s *Toolset) Run(ctx context.Context, calls []Call) ([]Outcome, error) {
	outs := toolcall.RunTurn(ctx, calls, s.maxParallel, s.call)
	return toolcall.Outcomes[Outcome](outs), toolcall.Failures(outs, newCallError)
}

func (s *Toolset) call(ctx context.Context, c Call) (*mcpadapter.Result, error) {
	e := s.byName[c.Name]
	if e == nil {
		return modelError(fmt.Sprintf("unknown tool %q", c.Name)), nil
	}
	args := c.Input
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return modelError(fmt.Sprintf("tool %q: the input is not JSON", c.Name)), nil
	}
	args, err := e.profile.Restore(args)
	if err != nil {
		return modelError(fmt.Sprintf("tool %q: %v", c.Name, err)), nil
	}
	// An argument the profile renamed is named in the message about
	// invalid arguments as the model wrote it.
	return e.tool.CallWith(ctx, args, &mcpadapter.CallOptions{ArgumentPath: e.profile.ModelPath})
}

// Resume answers a pending outcome's question and finishes its call; the
// result may be pending again (another question).
func (s *Toolset) Resume(ctx context.Context, o Outcome, answers *elicitation.Resume) (Outcome, error) {
	if o.Pending == nil {
		return o, fmt.Errorf("anthropic: tool call %s (%s) is not pending", o.Call.ID, o.Call.Name)
	}
	e := s.byName[o.Call.Name]
	if e == nil {
		return o, fmt.Errorf("anthropic: tool call %s: unknown tool %q", o.Call.ID, o.Call.Name)
	}
	out, err := toolcall.Resume(ctx, e.tool, o.Call, o.Pending, answers, newCallError)
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

func (s *Toolset) resumeCall(ctx context.Context, c Call, p *mcpadapter.PendingCall, answers *elicitation.Resume) (*mcpadapter.Result, error) {
	e := s.byName[c.Name]
	if e == nil {
		return nil, fmt.Errorf("anthropic: unknown tool %q", c.Name)
	}
	return e.tool.Resume(ctx, p, answers)
}

// Waiting reports whether a call of outs waits for the user's answers
// (Outcome.Pending set): then resume the turn with ResumeTurn.
func Waiting(outs []Outcome) bool { return toolcall.WaitingOutcomes(outs) }

func modelError(text string) *mcpadapter.Result { return toolcall.ErrorResult(text) }
