package genkit

import (
	"encoding/json"
	"fmt"

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
	// MetaAnswers holds the elicitation.Resume of a restart.
	MetaAnswers = "mcpadapter_answers"
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

// Restart returns the part for ai.WithToolRestarts that resumes p's MCP
// call with the answers; the tool may interrupt again (another question,
// or the same one with Interrupt.Problem set).
func (s *Toolset) Restart(p Pending, answers *elicitation.Resume) (*ai.Part, error) {
	if p.Part == nil || p.Part.ToolRequest == nil || p.Call == nil {
		return nil, fmt.Errorf("genkit: Restart: no interrupted tool request")
	}
	e := s.byName[p.Part.ToolRequest.Name]
	if e == nil {
		return nil, fmt.Errorf("genkit: Restart: unknown tool %q", p.Part.ToolRequest.Name)
	}
	if answers == nil {
		answers = &elicitation.Resume{}
	}
	pending, err := toMap(p.Call)
	if err != nil {
		return nil, fmt.Errorf("genkit: Restart: tool %q: %w", e.mcp.Name, err)
	}
	ans, err := toMap(answers)
	if err != nil {
		return nil, fmt.Errorf("genkit: Restart: tool %q: answers: %w", e.mcp.Name, err)
	}
	part, err := e.tool.RestartWith(p.Part, ai.WithResumedMetadata[any](map[string]any{MetaPending: pending, MetaAnswers: ans}))
	if err != nil {
		return nil, fmt.Errorf("genkit: Restart: tool %q: %w", e.mcp.Name, err)
	}
	return part, nil
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

// resumed reads a restart's metadata: ok is false for a first call.
func resumed(meta map[string]any) (p *mcpadapter.PendingCall, answers *elicitation.Resume, ok bool, err error) {
	if meta == nil || meta[MetaPending] == nil {
		return nil, nil, false, nil
	}
	p = new(mcpadapter.PendingCall)
	if err := decode(meta[MetaPending], p); err != nil {
		return nil, nil, false, fmt.Errorf("restart metadata %q: %w", MetaPending, err)
	}
	answers = new(elicitation.Resume)
	if v := meta[MetaAnswers]; v != nil {
		if err := decode(v, answers); err != nil {
			return nil, nil, false, fmt.Errorf("restart metadata %q: %w", MetaAnswers, err)
		}
	}
	return p, answers, true, nil
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
