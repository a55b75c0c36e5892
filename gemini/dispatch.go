package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"google.golang.org/genai"
)

// A Call is one function call the model made.
type Call struct {
	// ID is the call's id (FunctionCall.ID; empty when the model sent
	// none), echoed in the FunctionResponse.
	ID string
	// Name is the tool's name.
	Name string
	// Args are the arguments the model wrote.
	Args map[string]any
}

// Calls returns the function calls of the first candidate of a
// generateContent response.
func Calls(resp *genai.GenerateContentResponse) []Call {
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return nil
	}
	var out []Call
	for _, p := range resp.Candidates[0].Content.Parts {
		if fc := p.FunctionCall; fc != nil {
			out = append(out, Call{ID: fc.ID, Name: fc.Name, Args: fc.Args})
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
	return fmt.Sprintf("gemini: function call %s (%s): %v", e.Call.ID, e.Call.Name, e.Err)
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
		return Outcome{Call: c, Result: modelError(fmt.Sprintf("unknown function %q", c.Name))}
	}
	args := json.RawMessage("{}")
	if c.Args != nil {
		data, err := json.Marshal(c.Args)
		if err != nil {
			return Outcome{Call: c, Result: modelError(fmt.Sprintf("function %q: the arguments cannot be written as JSON: %v", c.Name, err))}
		}
		args = data
	}
	args, err := e.profile.Restore(args)
	if err != nil {
		return Outcome{Call: c, Result: modelError(fmt.Sprintf("function %q: %v", c.Name, err))}
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
		return o, fmt.Errorf("gemini: function call %s (%s) is not pending", o.Call.ID, o.Call.Name)
	}
	e := s.byName[o.Call.Name]
	if e == nil {
		return o, fmt.Errorf("gemini: function call %s: unknown function %q", o.Call.ID, o.Call.Name)
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
