package langchaingo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// DefaultMaxParallel is how many tool calls of one turn run at once
// unless Options.MaxParallel says otherwise.
const DefaultMaxParallel = 8

// Options configures New; nil means the defaults.
type Options struct {
	// Profile is the schema profile (default schemaprofile.OpenAI).
	Profile schemaprofile.Profile
	// MaxParallel bounds the tool calls one Run runs at once
	// (default DefaultMaxParallel).
	MaxParallel int
}

// A Toolset is MCP tools for langchaingo.
type Toolset struct {
	byName      map[string]*Tool
	order       []*Tool
	maxParallel int
}

// Tool is one MCP tool as a langchaingo tools.Tool.
type Tool struct {
	mcp     *mcpadapter.Tool
	profile *schemaprofile.Result
	params  map[string]any
}

var _ tools.Tool = (*Tool)(nil)

// New passes every tool's input schema through the profile. A schema the
// profile cannot read is an error naming the server and tool.
func New(tools []*mcpadapter.Tool, opts *Options) (*Toolset, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Profile == "" {
		o.Profile = schemaprofile.OpenAI
	}
	if o.MaxParallel <= 0 {
		o.MaxParallel = DefaultMaxParallel
	}
	s := &Toolset{byName: map[string]*Tool{}, maxParallel: o.MaxParallel}
	for _, t := range tools {
		r, err := schemaprofile.Apply(o.Profile, t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("langchaingo: server %q tool %q: %w", t.Server, t.Name, err)
		}
		var params map[string]any
		if err := json.Unmarshal(r.Schema, &params); err != nil {
			return nil, fmt.Errorf("langchaingo: server %q tool %q: input schema is no JSON object: %w", t.Server, t.Name, err)
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("langchaingo: two tools named %q (server %q)", t.Name, t.Server)
		}
		lt := &Tool{mcp: t, profile: r, params: params}
		s.byName[t.Name] = lt
		s.order = append(s.order, lt)
	}
	return s, nil
}

// Profile returns what the profile did to the named tool's schema (its
// Changes are the losses), or nil for an unknown name.
func (s *Toolset) Profile(name string) *schemaprofile.Result {
	if t := s.byName[name]; t != nil {
		return t.profile
	}
	return nil
}

// Definitions returns the tools as llms.Tool function definitions, for
// llms.WithTools.
func (s *Toolset) Definitions() []llms.Tool {
	out := make([]llms.Tool, 0, len(s.order))
	for _, t := range s.order {
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name:        t.mcp.Name,
			Description: t.mcp.Description,
			Parameters:  t.params,
			Strict:      t.profile.Strict,
		}})
	}
	return out
}

// Tools returns the tools as langchaingo tools.Tool values (for agents
// that pass the tool a string).
func (s *Toolset) Tools() []tools.Tool {
	out := make([]tools.Tool, 0, len(s.order))
	for _, t := range s.order {
		out = append(out, t)
	}
	return out
}

// Tool returns the named tool, or nil.
func (s *Toolset) Tool(name string) *Tool { return s.byName[name] }

// Name is the tool's name as the model knows it.
func (t *Tool) Name() string { return t.mcp.Name }

// Description is the tool's description; langchaingo's text agents show
// it to the model, so it ends with the input the tool takes.
func (t *Tool) Description() string {
	return t.mcp.Description + "\nInput: a JSON object matching this JSON Schema: " + string(t.profile.Schema)
}

// MCP returns the wrapped tool.
func (t *Tool) MCP() *mcpadapter.Tool { return t.mcp }

// Call runs the tool with input, a JSON object (an empty input is {}). A
// tool error comes back as the text "Error: ..." with a nil error, so the
// agent's model reads it; a transport failure is the error; a server's
// question is an error wrapping *mcpadapter.InputRequiredError (resume
// with Resume).
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	res, err := t.CallResult(ctx, input)
	if err != nil {
		return "", err
	}
	return resultText(res), nil
}

// CallResult is Call returning the whole result (its Artifact holds the
// structured content). Bad input is an error result, not a Go error.
func (t *Tool) CallResult(ctx context.Context, input string) (*mcpadapter.Result, error) {
	args, bad := t.arguments(input)
	if bad != nil {
		return bad, nil
	}
	res, err := t.mcp.CallWith(ctx, args, t.callOptions())
	if err != nil {
		return nil, fmt.Errorf("langchaingo: tool %q: %w", t.mcp.Name, err)
	}
	return res, nil
}

// Resume answers a pending call of this tool (from Call's
// *mcpadapter.InputRequiredError) and returns the text, as Call does.
func (t *Tool) Resume(ctx context.Context, pending *mcpadapter.PendingCall, answers *elicitation.Resume) (string, error) {
	res, err := t.mcp.Resume(ctx, pending, answers)
	if err != nil {
		return "", fmt.Errorf("langchaingo: tool %q: %w", t.mcp.Name, err)
	}
	return resultText(res), nil
}

// callOptions name an invalid argument in the check's message as the
// model wrote it, through the profile's renames.
func (t *Tool) callOptions() *mcpadapter.CallOptions {
	return &mcpadapter.CallOptions{ArgumentPath: t.profile.ModelPath}
}

// arguments checks the model's input and maps it back through the
// profile; a bad input is returned as the error result the model reads.
func (t *Tool) arguments(input string) (json.RawMessage, *mcpadapter.Result) {
	args := json.RawMessage(input)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return nil, modelError(fmt.Sprintf("tool %q: the input is not JSON", t.mcp.Name))
	}
	args, err := t.profile.Restore(args)
	if err != nil {
		return nil, modelError(fmt.Sprintf("tool %q: %v", t.mcp.Name, err))
	}
	return args, nil
}

// PendingOf returns the pending call an error of Tool.Call carries, or nil.
func PendingOf(err error) *mcpadapter.PendingCall {
	var ire *mcpadapter.InputRequiredError
	if errors.As(err, &ire) {
		return ire.Pending
	}
	return nil
}

func resultText(res *mcpadapter.Result) string {
	if res == nil {
		return ""
	}
	if res.IsError {
		return "Error: " + res.Text()
	}
	return res.Text()
}

func modelError(text string) *mcpadapter.Result {
	return &mcpadapter.Result{IsError: true, Content: []mcpadapter.Content{&mcpadapter.TextContent{Text: text}}}
}
