package eino

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// Output is attached to every tool event (adk.AgentEvent.Action's
// CustomizedAction) so the application can tell an error result from a
// normal one and read the structured content, which the model sees only
// as text:
//
//	if out, ok := ev.Action.CustomizedAction.(*eino.Output); ok && out.IsError { ... }
type Output struct {
	// Tool is the tool's name as the model knows it; Server owns it.
	Tool, Server string
	// IsError reports that the tool ran and failed (its text went to the
	// model as the tool's output).
	IsError bool
	// Unavailable reports that the tool's server could not be reached and
	// the model was told so (AgentConfig.TransportErrorsAsResults); IsError
	// is set too. AgentConfig.OnTransportError gets the error.
	Unavailable bool
	// StructuredContent is the result's structured content, or nil.
	StructuredContent json.RawMessage
	// Meta is the result's _meta, or nil.
	Meta map[string]any
}

func init() {
	// Everything that lives in an eino checkpoint must be registered.
	schema.RegisterName[*Output]("mcpadapter_eino_output")
	schema.RegisterName[*elicitation.Interrupt](elicitation.GobNameInterrupt)
	schema.RegisterName[*elicitation.Resume](elicitation.GobNameResume)
	schema.RegisterName[*mcpadapter.PendingCall]("mcpadapter_pending_call")
}

// Tool is an mcpadapter.Tool as an eino tool.InvokableTool.
//
// A result the tool reports as an error reaches the model as the tool's
// output, with the server's own words; it never ends the agent run. A
// transport failure does end it, with the *mcpadapter.TransportError,
// unless AgentConfig.TransportErrorsAsResults (or the adapter's
// Options.TransportErrorsAsResults) is set. A server's question (in
// ElicitInterrupt mode) interrupts the run with an
// *elicitation.Interrupt; resume it with an *elicitation.Resume.
type Tool struct {
	mcp     *mcpadapter.Tool
	params  *schema.ParamsOneOf
	schema  json.RawMessage       // the input schema the model gets
	profile *schemaprofile.Result // nil without ToolOptions.Profile

	soft      bool                                              // transport failures are results
	onFailure func(context.Context, *mcpadapter.TransportError) // told about each
}

// ToolOptions configures NewToolWith and ToolsWith; nil means the
// defaults.
type ToolOptions struct {
	// Profile passes each input schema through a schemaprofile profile
	// before it becomes eino's parameters: schemaprofile.Gemini for an
	// eino Gemini model, schemaprofile.OpenAIStrict or OpenAI for an
	// OpenAI one, schemaprofile.Anthropic for Claude (arguments of
	// renamed properties are mapped back before the call). Empty (the
	// default) keeps the behaviour eino users had before profiles: the
	// server's schema, only normalised for eino's types (NormalizeSchema);
	// that is schemaprofile.Verbatim.
	Profile schemaprofile.Profile
}

// NewTool wraps t. It fails when t's input schema cannot be represented in
// eino's schema types.
func NewTool(t *mcpadapter.Tool) (*Tool, error) { return NewToolWith(t, nil) }

// NewToolWith wraps t with options. It fails when the profile cannot read
// t's input schema or the result cannot be represented in eino's schema
// types; the error names the tool and server.
func NewToolWith(t *mcpadapter.Tool, opts *ToolOptions) (*Tool, error) {
	et := &Tool{mcp: t, schema: t.InputSchema}
	if opts != nil && opts.Profile != "" {
		r, err := schemaprofile.Apply(opts.Profile, t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q of server %q: %w", t.Name, t.Server, err)
		}
		et.schema, et.profile = r.Schema, r
	}
	params, err := ToolParams(et.schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q of server %q: %w", t.Name, t.Server, err)
	}
	et.params = params
	return et, nil
}

// Profile returns what ToolOptions.Profile did to the tool's schema (its
// Changes are the losses), or nil when no profile was set.
func (t *Tool) Profile() *schemaprofile.Result { return t.profile }

// SkippedTool is a tool Tools left out because its input schema cannot be
// represented in eino's schema types.
type SkippedTool struct {
	// Tool is the tool left out.
	Tool *mcpadapter.Tool
	// Err says why.
	Err error
}

// Tools wraps each of tools. A tool whose schema cannot be represented is
// left out and listed in skipped; the other tools are returned and usable
// all the same.
func Tools(tools []*mcpadapter.Tool) (wrapped []tool.BaseTool, skipped []SkippedTool) {
	return ToolsWith(tools, nil)
}

// ToolsWith is Tools with options (a schema profile).
func ToolsWith(tools []*mcpadapter.Tool, opts *ToolOptions) (wrapped []tool.BaseTool, skipped []SkippedTool) {
	wrapped = make([]tool.BaseTool, 0, len(tools))
	for _, t := range tools {
		et, err := NewToolWith(t, opts)
		if err != nil {
			skipped = append(skipped, SkippedTool{Tool: t, Err: err})
			continue
		}
		wrapped = append(wrapped, et)
	}
	return wrapped, skipped
}

// MCP returns the wrapped tool.
func (t *Tool) MCP() *mcpadapter.Tool { return t.mcp }

// Info implements tool.BaseTool.
func (t *Tool) Info(context.Context) (*schema.ToolInfo, error) {
	desc := t.mcp.Description
	if desc == "" {
		desc = t.mcp.Title
	}
	// A fresh copy each time: model implementations may change it in place.
	params, err := ToolParams(t.schema)
	if err != nil {
		params = t.params
	}
	return &schema.ToolInfo{Name: t.mcp.Name, Desc: desc, ParamsOneOf: params}, nil
}

// InvokableRun implements tool.InvokableTool.
func (t *Tool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	res, err := t.run(ctx, args)
	var ir *mcpadapter.InputRequiredError
	if errors.As(err, &ir) {
		return "", tool.StatefulInterrupt(ctx, ir.Pending.Interrupt(), ir.Pending)
	}
	var te *mcpadapter.TransportError
	if err != nil && t.soft && ctx.Err() == nil && errors.As(err, &te) {
		res, err = mcpadapter.TransportErrorResult(te), nil
	}
	if err != nil {
		return "", err
	}
	if res.Failure != nil && t.onFailure != nil {
		t.onFailure(ctx, res.Failure)
	}
	out := &Output{Tool: t.mcp.Name, Server: t.mcp.Server, IsError: res.IsError, Unavailable: res.Failure != nil, Meta: res.Meta}
	if res.Artifact != nil {
		out.StructuredContent = res.Artifact.StructuredContent
	}
	// Only a ChatModelAgent collects actions; elsewhere there is nobody to
	// tell, which is not the tool's failure.
	_ = adk.SendToolGenAction(ctx, t.mcp.Name, &adk.AgentAction{CustomizedAction: out})
	return res.Text(), nil
}

// run calls the tool, or resumes it when the agent run was interrupted by
// its server's question.
//
// Every interrupted call of a run is run again when the run is resumed,
// answered or not. A call with questions the user did not answer keeps
// waiting, and says so to the core (Resume with nil), so that a call
// queued behind it on a handshake-era connection does not wait for its
// answer. A queued call, which asks nothing, is resumed here without the
// application: it waits for the answer of the call ahead of it, which
// eino resumes at the same time, then runs (see the core's park.go).
func (t *Tool) run(ctx context.Context, args string) (*mcpadapter.Result, error) {
	ctx = withRun(ctx)
	wasInterrupted, hasState, pending := tool.GetInterruptState[*mcpadapter.PendingCall](ctx)
	if !wasInterrupted || !hasState || pending == nil {
		raw := json.RawMessage(args)
		if t.profile != nil && json.Valid(raw) {
			// Map renamed properties back (Anthropic profile).
			restored, err := t.profile.Restore(raw)
			if err != nil {
				return nil, fmt.Errorf("eino: tool %q: %w", t.mcp.Name, err)
			}
			raw = restored
		}
		var opts *mcpadapter.CallOptions
		if t.profile != nil {
			// An invalid argument is named as the model wrote it.
			opts = &mcpadapter.CallOptions{ArgumentPath: t.profile.ModelPath}
		}
		return t.mcp.CallWith(ctx, raw, opts)
	}
	if len(pending.Requests) == 0 {
		return t.mcp.Resume(ctx, pending, nil)
	}
	isTarget, hasData, data := tool.GetResumeContext[any](ctx)
	if !isTarget {
		// Another interrupt of this run was resumed: keep waiting.
		return t.mcp.Resume(ctx, pending, nil)
	}
	if !hasData {
		_, _ = t.mcp.Resume(ctx, pending, nil)
		return nil, reask(pending, errors.New("resumed without answers: pass an *elicitation.Resume for this interrupt"))
	}
	resume, err := toResume(data)
	if err != nil {
		_, _ = t.mcp.Resume(ctx, pending, nil)
		return nil, reask(pending, err)
	}
	res, err := t.mcp.Resume(ctx, pending, resume)
	var ee *elicitation.Error
	if errors.As(err, &ee) {
		// A bad answer: nothing was sent; ask the same questions again.
		return nil, reask(pending, err)
	}
	return res, err
}

// RunSessionKey is the eino session value that names an agent run for the
// core (mcpadapter.WithRun): the calls of one run on a handshake-era
// server wait for each other's questions, and a call of a new run closes
// a question an earlier run left unanswered. eino keeps session values in
// the run's checkpoint, so a resumed run is the same run.
const RunSessionKey = "mcpadapter_run"

// RunOption names a new run: pass it to adk.Runner's Run or Query when
// you run the tools with your own Runner (Agent.Query does). Without it,
// every run is one run to the core: a question nobody answered keeps the
// calls of later runs to its handshake-era server queued until it is
// answered or its ParkTimeout ends.
func RunOption() adk.AgentRunOption {
	return adk.WithSessionValues(map[string]any{RunSessionKey: mcpadapter.NewRunID()})
}

// withRun names ctx's run for the core: the run's session value, the run
// ctx already names, or one run for everything without either.
func withRun(ctx context.Context) context.Context {
	if v, ok := adk.GetSessionValue(ctx, RunSessionKey); ok {
		if id, ok := v.(string); ok && id != "" {
			return mcpadapter.WithRun(ctx, id)
		}
	}
	if mcpadapter.RunFrom(ctx) != "" {
		return ctx
	}
	return mcpadapter.WithRun(ctx, "eino")
}

// reask interrupts again with the same questions and why the answer was
// not taken.
func reask(p *mcpadapter.PendingCall, why error) error {
	again := *p
	again.Problem = why.Error()
	return &mcpadapter.InputRequiredError{Pending: &again}
}

// toResume accepts the resume data as an *elicitation.Resume, an
// elicitation.Resume, or its JSON form (string, []byte, map).
func toResume(data any) (*elicitation.Resume, error) {
	switch d := data.(type) {
	case *elicitation.Resume:
		if d == nil {
			return nil, errors.New("nil *elicitation.Resume")
		}
		return d, nil
	case elicitation.Resume:
		return &d, nil
	case string:
		return decodeResume([]byte(d))
	case []byte:
		return decodeResume(d)
	case json.RawMessage:
		return decodeResume(d)
	default:
		b, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("resume data of type %T: %w", data, err)
		}
		return decodeResume(b)
	}
}

func decodeResume(b []byte) (*elicitation.Resume, error) {
	// Numbers stay as written (json.Number): elicitation.Check sends them
	// exactly or refuses them.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var r elicitation.Resume
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf(`resume data is not {"responses": {...}}: %w`, err)
	}
	if r.Responses == nil {
		return nil, errors.New(`resume data has no "responses"`)
	}
	return &r, nil
}
