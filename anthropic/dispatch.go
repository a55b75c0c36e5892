package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
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

// An Outcome is what one call came to.
type Outcome struct {
	Call Call
	// Result is the tool's result (IsError for a tool error the model
	// reads); nil when Pending or Err is set.
	Result *mcpadapter.Result
	// Pending is set when the server asked the user something
	// (elicitation with mcpadapter.ElicitInterrupt): ask, then Resume.
	Pending *mcpadapter.PendingCall
	// Err is a transport failure: the model cannot act on it.
	Err error
}

// A CallError is a call whose tool could not be reached.
type CallError struct {
	Call Call
	Err  error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("anthropic: tool call %s (%s): %v", e.Call.ID, e.Call.Name, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// Run runs calls, at most MaxParallel at once, and returns one Outcome
// per call in the same order. The error joins the CallErrors of
// transport failures; the other outcomes are complete.
func (s *Toolset) Run(ctx context.Context, calls []Call) ([]Outcome, error) {
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

func (s *Toolset) run(ctx context.Context, c Call) Outcome {
	e := s.byName[c.Name]
	if e == nil {
		return Outcome{Call: c, Result: modelError(fmt.Sprintf("unknown tool %q", c.Name))}
	}
	args := c.Input
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return Outcome{Call: c, Result: modelError(fmt.Sprintf("tool %q: the input is not JSON", c.Name))}
	}
	args, err := e.profile.Restore(args)
	if err != nil {
		return Outcome{Call: c, Result: modelError(fmt.Sprintf("tool %q: %v", c.Name, err))}
	}
	res, err := e.tool.Call(ctx, args)
	return outcome(c, res, err)
}

func outcome(c Call, res *mcpadapter.Result, err error) Outcome {
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
		return o, fmt.Errorf("anthropic: tool call %s (%s) is not pending", o.Call.ID, o.Call.Name)
	}
	e := s.byName[o.Call.Name]
	if e == nil {
		return o, fmt.Errorf("anthropic: tool call %s: unknown tool %q", o.Call.ID, o.Call.Name)
	}
	res, err := e.tool.Resume(ctx, o.Pending, answers)
	out := outcome(o.Call, res, err)
	if out.Err != nil {
		return out, &CallError{Call: o.Call, Err: out.Err}
	}
	return out, nil
}

func modelError(text string) *mcpadapter.Result {
	return &mcpadapter.Result{IsError: true, Content: []mcpadapter.Content{&mcpadapter.TextContent{Text: text}}}
}
