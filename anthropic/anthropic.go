package anthropic

import (
	"encoding/json"
	"fmt"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// DefaultMaxParallel is how many tool calls of one turn run at once
// unless Options.MaxParallel says otherwise.
const DefaultMaxParallel = 8

// Options configures New; nil means the defaults.
type Options struct {
	// Profile is the schema profile: schemaprofile.Anthropic (the
	// default), schemaprofile.AnthropicStrict (strict tool use: the
	// model's arguments are guaranteed to match the schema) or
	// schemaprofile.Verbatim. Under AnthropicStrict, a tool is sent with
	// strict true when its schema could be made strict and the request's
	// limits of strict tool use still hold (schemaprofile's
	// AnthropicMaxStrictTools, AnthropicMaxOptional, AnthropicMaxUnions,
	// counted in the tools' order); the others go as they are, not
	// strict. Toolset.Strict says which.
	Profile schemaprofile.Profile
	// MaxParallel bounds the tool calls one Run runs at once
	// (default DefaultMaxParallel).
	MaxParallel int
}

// A Toolset is MCP tools as Anthropic Messages tools.
type Toolset struct {
	byName      map[string]*entry
	order       []*entry
	maxParallel int
}

type entry struct {
	tool    *mcpadapter.Tool
	profile *schemaprofile.Result
	schema  ant.ToolInputSchemaParam
	strict  bool // sent with strict true
}

// New passes every tool's input schema through the profile. A schema the
// profile cannot read is an error naming the server and tool.
func New(tools []*mcpadapter.Tool, opts *Options) (*Toolset, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Profile == "" {
		o.Profile = schemaprofile.Anthropic
	}
	switch o.Profile {
	case schemaprofile.Anthropic, schemaprofile.AnthropicStrict, schemaprofile.Verbatim:
	default:
		return nil, fmt.Errorf("anthropic: profile %q is not for Anthropic (want %q, %q or %q)",
			o.Profile, schemaprofile.Anthropic, schemaprofile.AnthropicStrict, schemaprofile.Verbatim)
	}
	if o.MaxParallel <= 0 {
		o.MaxParallel = DefaultMaxParallel
	}
	s := &Toolset{byName: map[string]*entry{}, maxParallel: o.MaxParallel}
	var budget strictBudget
	for _, t := range tools {
		r, err := schemaprofile.Apply(o.Profile, t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("anthropic: server %q tool %q: %w", t.Server, t.Name, err)
		}
		schema, err := inputSchema(r.Schema)
		if err != nil {
			return nil, fmt.Errorf("anthropic: server %q tool %q: %w", t.Server, t.Name, err)
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("anthropic: two tools named %q (server %q)", t.Name, t.Server)
		}
		e := &entry{tool: t, profile: r, schema: schema, strict: budget.take(r)}
		s.byName[t.Name] = e
		s.order = append(s.order, e)
	}
	return s, nil
}

// strictBudget counts what the strict tools of one request take of
// Anthropic's limits.
type strictBudget struct{ tools, optional, unions int }

// take reports whether r goes strict within the limits, and counts it.
func (b *strictBudget) take(r *schemaprofile.Result) bool {
	if !r.Strict || b.tools+1 > schemaprofile.AnthropicMaxStrictTools ||
		b.optional+r.Optional > schemaprofile.AnthropicMaxOptional ||
		b.unions+r.Unions > schemaprofile.AnthropicMaxUnions {
		return false
	}
	b.tools, b.optional, b.unions = b.tools+1, b.optional+r.Optional, b.unions+r.Unions
	return true
}

// inputSchema makes the SDK's input_schema send the profile's schema
// byte for byte (property order, $defs, vendor keywords, big integers; the
// SDK's own extra-fields path would read keys such as "a.b" or "" as
// paths). Properties and Required are filled in too, for reading.
func inputSchema(schema json.RawMessage) (ant.ToolInputSchemaParam, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(schema, &root); err != nil {
		return ant.ToolInputSchemaParam{}, fmt.Errorf("input schema is no JSON object: %w", err)
	}
	var typ string
	if err := json.Unmarshal(root["type"], &typ); err != nil || typ != "object" {
		return ant.ToolInputSchemaParam{}, fmt.Errorf("input schema: type %s, want \"object\" (use the anthropic profile)", root["type"])
	}
	out := param.Override[ant.ToolInputSchemaParam](schema)
	if raw, ok := root["properties"]; ok {
		out.Properties = raw
	}
	if raw, ok := root["required"]; ok {
		if err := json.Unmarshal(raw, &out.Required); err != nil {
			return ant.ToolInputSchemaParam{}, fmt.Errorf("input schema: /required: %w", err)
		}
	}
	return out, nil
}

// Profile returns what the profile did to the named tool's schema (its
// Changes are the losses), or nil for an unknown name.
func (s *Toolset) Profile(name string) *schemaprofile.Result {
	if e := s.byName[name]; e != nil {
		return e.profile
	}
	return nil
}

// Strict reports whether the named tool is sent with strict true.
func (s *Toolset) Strict(name string) bool {
	e := s.byName[name]
	return e != nil && e.strict
}

// Tools returns the tools for MessageNewParams.Tools.
func (s *Toolset) Tools() []ant.ToolUnionParam {
	out := make([]ant.ToolUnionParam, 0, len(s.order))
	for _, e := range s.order {
		tp := &ant.ToolParam{Name: e.tool.Name, InputSchema: e.schema}
		if e.strict {
			tp.Strict = param.NewOpt(true)
		}
		if e.tool.Description != "" {
			tp.Description = param.NewOpt(e.tool.Description)
		}
		out = append(out, ant.ToolUnionParam{OfTool: tp})
	}
	return out
}
