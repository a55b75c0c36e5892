package openai

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultMaxParallel is how many tool calls of one turn run at once
// unless Options.MaxParallel says otherwise.
const DefaultMaxParallel = 8

// Options configures New; nil means the defaults.
type Options struct {
	// Profile is the schema profile: schemaprofile.OpenAIStrict (the
	// default), schemaprofile.OpenAI or schemaprofile.Verbatim.
	Profile schemaprofile.Profile
	// MaxParallel bounds the tool calls one Run runs at once
	// (default DefaultMaxParallel).
	MaxParallel int
}

// A Toolset is MCP tools as OpenAI function tools.
type Toolset struct {
	byName      map[string]*entry
	order       []*entry
	maxParallel int
}

type entry struct {
	name, desc string
	tool       *mcpadapter.Tool // nil for a tool answered here (load_skill)
	profile    *schemaprofile.Result
	params     map[string]any
	strict     bool
	// local answers a tool this package provides (AddSkillTool).
	local func(ctx context.Context, args json.RawMessage) *mcpadapter.Result
}

// New passes every tool's input schema through the profile. A schema the
// profile cannot read is an error naming the server and tool.
func New(tools []*mcpadapter.Tool, opts *Options) (*Toolset, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Profile == "" {
		o.Profile = schemaprofile.OpenAIStrict
	}
	switch o.Profile {
	case schemaprofile.OpenAIStrict, schemaprofile.OpenAI, schemaprofile.Verbatim:
	default:
		return nil, fmt.Errorf("openai: profile %q is not for OpenAI (want %q, %q or %q)",
			o.Profile, schemaprofile.OpenAIStrict, schemaprofile.OpenAI, schemaprofile.Verbatim)
	}
	if o.MaxParallel <= 0 {
		o.MaxParallel = DefaultMaxParallel
	}
	s := &Toolset{byName: map[string]*entry{}, maxParallel: o.MaxParallel}
	for _, t := range tools {
		r, err := schemaprofile.Apply(o.Profile, t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("openai: server %q tool %q: %w", t.Server, t.Name, err)
		}
		var params map[string]any
		if err := json.Unmarshal(r.Schema, &params); err != nil {
			return nil, fmt.Errorf("openai: server %q tool %q: input schema is no JSON object: %w", t.Server, t.Name, err)
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("openai: two tools named %q (server %q)", t.Name, t.Server)
		}
		e := &entry{name: t.Name, desc: t.Description, tool: t, profile: r, params: params, strict: r.Strict}
		s.byName[t.Name] = e
		s.order = append(s.order, e)
	}
	return s, nil
}

// Profile returns what the profile did to the named tool's schema (its
// Changes are the losses), or nil for an unknown name.
func (s *Toolset) Profile(name string) *schemaprofile.Result {
	if e := s.byName[name]; e != nil {
		return e.profile
	}
	return nil
}

// ChatTools returns the tools as Chat Completions function tools.
func (s *Toolset) ChatTools() []oai.ChatCompletionToolUnionParam {
	out := make([]oai.ChatCompletionToolUnionParam, 0, len(s.order))
	for _, e := range s.order {
		fn := shared.FunctionDefinitionParam{
			Name:       e.name,
			Parameters: shared.FunctionParameters(e.params),
			Strict:     param.NewOpt(e.strict),
		}
		if e.desc != "" {
			fn.Description = param.NewOpt(e.desc)
		}
		out = append(out, oai.ChatCompletionFunctionTool(fn))
	}
	return out
}

// ResponseTools returns the tools as Responses function tools.
func (s *Toolset) ResponseTools() []responses.ToolUnionParam {
	out := make([]responses.ToolUnionParam, 0, len(s.order))
	for _, e := range s.order {
		fn := &responses.FunctionToolParam{
			Name:       e.name,
			Parameters: e.params,
			Strict:     param.NewOpt(e.strict),
		}
		if e.desc != "" {
			fn.Description = param.NewOpt(e.desc)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: fn})
	}
	return out
}
