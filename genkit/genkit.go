package genkit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// Options configures New; nil means the defaults.
type Options struct {
	// Profile is the schema profile (default schemaprofile.Gemini).
	Profile schemaprofile.Profile
	// OnResult, if set, is given every result a tool call returns (tool
	// errors included), for the structured content (Result.Artifact) the
	// model sees only as text. It runs on the tool's goroutine, before
	// the model gets the output; ctx is the context of Generate.
	OnResult func(ctx context.Context, tool *mcpadapter.Tool, res *mcpadapter.Result)
}

// A Toolset is MCP tools as Genkit tools.
type Toolset struct {
	byName   map[string]*entry
	order    []*entry
	onResult func(context.Context, *mcpadapter.Tool, *mcpadapter.Result)
}

type entry struct {
	mcp     *mcpadapter.Tool
	profile *schemaprofile.Result
	tool    *ai.ToolDef[any, *ai.MultipartToolResponse]
}

// New passes every tool's input schema through the profile and wraps the
// tool. A schema the profile cannot read is an error naming the server
// and tool.
func New(tools []*mcpadapter.Tool, opts *Options) (*Toolset, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Profile == "" {
		o.Profile = schemaprofile.Gemini
	}
	s := &Toolset{byName: map[string]*entry{}, onResult: o.OnResult}
	for _, t := range tools {
		r, err := schemaprofile.Apply(o.Profile, t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("genkit: server %q tool %q: %w", t.Server, t.Name, err)
		}
		var schema map[string]any
		if err := json.Unmarshal(r.Schema, &schema); err != nil {
			return nil, fmt.Errorf("genkit: server %q tool %q: input schema is no JSON object: %w", t.Server, t.Name, err)
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("genkit: two tools named %q (server %q)", t.Name, t.Server)
		}
		e := &entry{mcp: t, profile: r}
		e.tool = ai.NewMultipartTool(t.Name, t.Description, s.run(e), ai.WithInputSchema(schema))
		s.byName[t.Name] = e
		s.order = append(s.order, e)
	}
	return s, nil
}

// Tools returns the Genkit tools.
func (s *Toolset) Tools() []ai.Tool {
	out := make([]ai.Tool, 0, len(s.order))
	for _, e := range s.order {
		out = append(out, e.tool)
	}
	return out
}

// Refs returns the tools for ai.WithTools.
func (s *Toolset) Refs() []ai.ToolRef {
	out := make([]ai.ToolRef, 0, len(s.order))
	for _, e := range s.order {
		out = append(out, e.tool)
	}
	return out
}

// Profile returns what the profile did to the named tool's schema (its
// Changes are the losses), or nil for an unknown name.
func (s *Toolset) Profile(name string) *schemaprofile.Result {
	if e := s.byName[name]; e != nil {
		return e.profile
	}
	return nil
}

// run is the Genkit tool function of e: a first call, or a restart after
// an interrupt, which carries the response Toolset.Resume got.
func (s *Toolset) run(e *entry) ai.MultipartToolFunc[any] {
	return func(tc *ai.ToolContext, input any) (*ai.MultipartToolResponse, error) {
		if out, err := restarted(tc.Resumed); err != nil || out != nil {
			if err != nil {
				return nil, fmt.Errorf("genkit: tool %q: %w", e.mcp.Name, err)
			}
			return out, nil
		}
		args, bad := arguments(e, input)
		if bad != nil {
			return response(bad), nil
		}
		// An invalid argument is named as the model wrote it.
		res, err := e.mcp.CallWith(withRun(tc), args, &mcpadapter.CallOptions{ArgumentPath: e.profile.ModelPath})
		var ire *mcpadapter.InputRequiredError
		switch {
		case errors.As(err, &ire):
			meta, merr := interruptMetadata(ire.Pending)
			if merr != nil {
				return nil, fmt.Errorf("genkit: tool %q: %w", e.mcp.Name, merr)
			}
			return nil, tc.Interrupt(&ai.InterruptOptions{Metadata: meta})
		case err != nil:
			return nil, fmt.Errorf("genkit: tool %q: %w", e.mcp.Name, err)
		}
		if s.onResult != nil {
			s.onResult(tc, e.mcp, res)
		}
		return response(res), nil
	}
}

// withRun gives the calls of a Generate without a run of its own
// (mcpadapter.WithRun) one run for all: the tool requests of a turn then
// wait for each other's questions on a handshake-era server. Name a run
// per user turn (docs/human-in-the-loop.md) so that a question left
// unanswered is closed by the next turn.
func withRun(ctx context.Context) context.Context {
	if mcpadapter.RunFrom(ctx) != "" {
		return ctx
	}
	return mcpadapter.WithRun(ctx, "genkit")
}

// arguments maps the model's input back through the profile; bad input
// is returned as the error result the model reads.
func arguments(e *entry, input any) (json.RawMessage, *mcpadapter.Result) {
	if input == nil {
		input = map[string]any{}
	}
	args, err := json.Marshal(input)
	if err != nil {
		return nil, modelError(fmt.Sprintf("tool %q: the input is not JSON: %v", e.mcp.Name, err))
	}
	args, err = e.profile.Restore(args)
	if err != nil {
		return nil, modelError(fmt.Sprintf("tool %q: %v", e.mcp.Name, err))
	}
	return args, nil
}

// response is the tool response for a result: the text as the output,
// images and audio as media parts.
func response(res *mcpadapter.Result) *ai.MultipartToolResponse {
	out := &ai.MultipartToolResponse{Output: Text(res)}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcpadapter.ImageContent:
			out.Content = append(out.Content, ai.NewMediaPart(c.MIMEType, dataURL(c.MIMEType, c.Data)))
		case *mcpadapter.AudioContent:
			out.Content = append(out.Content, ai.NewMediaPart(c.MIMEType, dataURL(c.MIMEType, c.Data)))
		}
	}
	return out
}

// Text is a result as the text the model reads: "Error: ..." for a tool
// error.
func Text(res *mcpadapter.Result) string {
	if res == nil {
		return ""
	}
	if res.IsError {
		return "Error: " + res.Text()
	}
	return res.Text()
}

func dataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func modelError(text string) *mcpadapter.Result {
	return &mcpadapter.Result{IsError: true, Content: []mcpadapter.Content{&mcpadapter.TextContent{Text: text}}}
}
