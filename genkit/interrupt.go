package genkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
)

// Keys of the interrupt and restart metadata. The values are plain JSON
// (maps), so a response's history can be saved and resumed later; a
// handshake-era call is parked in the process that made it.
const (
	// MetaInterrupt holds the elicitation.Interrupt (the questions).
	MetaInterrupt = "mcpadapter"
	// MetaPending holds the mcpadapter.PendingCall.
	MetaPending = "mcpadapter_pending"
	// MetaOutput holds a restart's finished tool response.
	MetaOutput = "mcpadapter_output"
)

// A Pending is an interrupted tool request whose server asked the user
// something.
type Pending struct {
	// Part is the interrupted tool request of the response.
	Part *ai.Part
	// Interrupt holds the server's questions.
	Interrupt *elicitation.Interrupt
	// Call is the pending MCP call.
	Call *mcpadapter.PendingCall
}

// Interrupts returns the interrupts of resp raised by this toolset's
// tools (other interrupts are left out).
func (s *Toolset) Interrupts(resp *ai.ModelResponse) []Pending {
	var out []Pending
	for _, p := range resp.Interrupts() {
		if p.ToolRequest == nil || s.byName[p.ToolRequest.Name] == nil {
			continue
		}
		meta, _ := p.Metadata["interrupt"].(map[string]any)
		var in elicitation.Interrupt
		var call mcpadapter.PendingCall
		if decode(meta[MetaInterrupt], &in) != nil || decode(meta[MetaPending], &call) != nil {
			continue
		}
		out = append(out, Pending{Part: p, Interrupt: &in, Call: &call})
	}
	return out
}

// Resume answers p's questions and finishes its MCP call. When the call
// is done it returns the part for ai.WithToolRestarts, which gives the
// tool's response to the model in the next Generate. When the server
// asks again (another question, or the same one with Interrupt.Problem
// set after an answer that does not fit) it returns next instead: ask,
// and Resume next. (Genkit v1.4.0 fails a Generate whose restarted tool
// interrupts again, so the questions are asked here, not in Generate.) A
// transport failure is the error.
func (s *Toolset) Resume(ctx context.Context, p Pending, answers *elicitation.Resume) (part *ai.Part, next *Pending, err error) {
	if p.Part == nil || p.Part.ToolRequest == nil || p.Call == nil {
		return nil, nil, fmt.Errorf("genkit: Resume: no interrupted tool request")
	}
	e := s.byName[p.Part.ToolRequest.Name]
	if e == nil {
		return nil, nil, fmt.Errorf("genkit: Resume: unknown tool %q", p.Part.ToolRequest.Name)
	}
	res, err := e.mcp.Resume(ctx, p.Call, answers)
	var ire *mcpadapter.InputRequiredError
	switch {
	case errors.As(err, &ire):
		return nil, &Pending{Part: p.Part, Interrupt: ire.Pending.Interrupt(), Call: ire.Pending}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("genkit: tool %q: %w", e.mcp.Name, err)
	}
	if s.onResult != nil {
		s.onResult(ctx, e.mcp, res)
	}
	out, err := toMap(response(res))
	if err != nil {
		return nil, nil, fmt.Errorf("genkit: tool %q: %w", e.mcp.Name, err)
	}
	part, err = e.tool.RestartWith(p.Part, ai.WithResumedMetadata[any](map[string]any{MetaOutput: out}))
	if err != nil {
		return nil, nil, fmt.Errorf("genkit: Resume: tool %q: %w", e.mcp.Name, err)
	}
	return part, nil, nil
}

// ResumeAll resumes the interrupted tool requests of one response at
// once, each with the answers to its questions, answers[p.Call.ID] (no
// entry: not answered this time, it stays waiting). A request queued
// behind another's question asks nothing (p.Call.Asks() is false) and
// runs once that question is answered. It returns the parts for
// ai.WithToolRestarts of the requests that finished and the requests
// still waiting (ask, and ResumeAll those: Genkit v1.4 cannot
// re-interrupt a restart); while any waits, one of them asks the user
// something. The error joins the transport failures.
func (s *Toolset) ResumeAll(ctx context.Context, pending []Pending, answers map[string]*elicitation.Resume) (restarts []*ai.Part, waiting []Pending, err error) {
	type outcome struct {
		part *ai.Part
		next *Pending
		err  error
	}
	outs := make([]outcome, len(pending))
	var wg sync.WaitGroup
	for i, p := range pending {
		var a *elicitation.Resume
		if p.Call.Asks() {
			a = answers[p.Call.ID]
		}
		wg.Go(func() {
			part, next, err := s.Resume(ctx, p, a)
			outs[i] = outcome{part, next, err}
		})
	}
	wg.Wait()
	var errs []error
	for _, o := range outs {
		switch {
		case o.err != nil:
			errs = append(errs, o.err)
		case o.next != nil:
			waiting = append(waiting, *o.next)
		default:
			restarts = append(restarts, o.part)
		}
	}
	return restarts, waiting, errors.Join(errs...)
}

// Unanswered returns the part for ai.WithToolRestarts that tells the
// model p's call waits for the user's answer: for a turn the user left
// without answering. (The next turn's calls close the question; see
// docs/human-in-the-loop.md.)
func (s *Toolset) Unanswered(p Pending) (*ai.Part, error) {
	if p.Part == nil || p.Part.ToolRequest == nil {
		return nil, fmt.Errorf("genkit: Unanswered: no interrupted tool request")
	}
	e := s.byName[p.Part.ToolRequest.Name]
	if e == nil {
		return nil, fmt.Errorf("genkit: Unanswered: unknown tool %q", p.Part.ToolRequest.Name)
	}
	out, err := toMap(response(modelError("the tool is waiting for the user's answer, which was not given")))
	if err != nil {
		return nil, err
	}
	return e.tool.RestartWith(p.Part, ai.WithResumedMetadata[any](map[string]any{MetaOutput: out}))
}

// interruptMetadata is the metadata of the interrupt for a pending call.
func interruptMetadata(p *mcpadapter.PendingCall) (map[string]any, error) {
	in, err := toMap(p.Interrupt())
	if err != nil {
		return nil, err
	}
	call, err := toMap(p)
	if err != nil {
		return nil, err
	}
	return map[string]any{MetaInterrupt: in, MetaPending: call}, nil
}

// restarted returns the response a restart carries, or nil for a first
// call.
func restarted(meta map[string]any) (*ai.MultipartToolResponse, error) {
	v, ok := meta[MetaOutput]
	if !ok {
		return nil, nil
	}
	out := new(ai.MultipartToolResponse)
	if err := decode(v, out); err != nil {
		return nil, fmt.Errorf("restart metadata %q: %w", MetaOutput, err)
	}
	return out, nil
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func decode(v, into any) error {
	if v == nil {
		return fmt.Errorf("missing")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
