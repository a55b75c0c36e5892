package mcpadapter

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/argplan"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Tool is one MCP tool, ready to hand to a model and to call.
//
// A Tool holds its Client, not a connection: it stays callable after the
// Adapter that listed it is closed, reconnecting on its next call.
type Tool struct {
	// Name is the name to show the model: the server's name for the tool
	// (or the one a ToolTransform gives it), made to match
	// ^[A-Za-z0-9_-]{1,64}$ and prefixed as Options.Prefix says.
	Name string
	// OriginalName is the server's own name for the tool.
	OriginalName string
	// Server is the name of the server that owns the tool.
	Server string
	// Title is the tool's display name, if any.
	Title string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the arguments, byte for byte as the
	// server sent it (unless a ToolTransform changes the arguments).
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the structured content, as sent, or
	// nil when the tool declares none.
	OutputSchema json.RawMessage
	// Annotations are the server's hints about the tool's behaviour, or nil.
	Annotations *mcp.ToolAnnotations
	// Meta is the tool's _meta, or nil.
	Meta map[string]any
	// Icons are the tool's icons, if any.
	Icons []mcp.Icon
	// TaskSupport is the tool's execution.taskSupport (2025-11-25 tasks):
	// "required", "optional", "forbidden", or "" when not said.
	TaskSupport string

	client *Client
	args   *argplan.Plan // the model's arguments to the server's; nil: as they are
	soft   bool          // transport failures are results (Options.TransportErrorsAsResults)
	// local, if set, answers calls and resumes instead of client: the
	// tool-search pair (search.go).
	local localTool
	// listedGen is client.toolsGen when the tool was listed (live.go).
	listedGen uint64

	timeout   time.Duration // ToolTransform.Timeout; 0: the client's
	maxResult int           // the byte limit of results' text; 0: DefaultMaxResultBytes, <0: none
	task      TaskMode      // the tool's TaskMode (ToolTransform.Task), or TaskDefault

	check   *argplan.Checker // the server's schema, to check arguments against
	noCheck bool             // ToolTransform/ServerTransform.SkipArgumentCheck
}

// Call calls the tool with args, a JSON object (nil or empty means {}).
//
// A tool that ran and failed gives a Result with IsError set and the
// server's own words in Content, as do the server's refusals of the call
// (unknown tool, invalid arguments) and arguments that are not a JSON
// object: a model can read these and try again. A failure to reach the
// server is a *TransportError; a result that cannot be converted is a
// *ContentError.
//
// In ElicitInterrupt mode (see Options.Elicitation) a call whose server
// asks the user a question returns an *InputRequiredError; continue it
// with Resume.
//
// Arguments that break the server's input schema are not sent: the
// Result is an error naming each wrong argument by JSON path and what was
// expected, for the model to fix (ToolTransform.SkipArgumentCheck and
// ServerTransform.SkipArgumentCheck turn this off; Client.CallTool never
// checks).
//
// A tool listed with a ToolTransform sends the server its own name and
// the arguments it expects (renamed back, hidden values and defaults
// filled in). With Options.TransportErrorsAsResults, a failure to reach
// the server is a Result the model can read, with Failure set.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	return t.CallWith(ctx, args, nil)
}

// CallWith is Call with per-call options (progress, _meta); opts may be
// nil.
//
// The result's text for a model (Result.Text, Result.ModelContent) is
// limited as Options.MaxResultBytes and the tool's own limit say.
func (t *Tool) CallWith(ctx context.Context, args json.RawMessage, opts *CallOptions) (*Result, error) {
	if t.local != nil {
		return t.local.call(ctx, args, opts)
	}
	toolTask := t.task != TaskDefault && (opts == nil || opts.Task == TaskDefault)
	if t.timeout > 0 || toolTask {
		o := CallOptions{}
		if opts != nil {
			o = *opts
		}
		o.toolTimeout = t.timeout
		if toolTask {
			o.Task = t.task
		}
		opts = &o
	}
	check := t.checkCall
	if opts != nil && opts.ArgumentPath != nil {
		check = func(args json.RawMessage) string { return t.checkCallAs(args, opts.ArgumentPath) }
	}
	res, err := t.client.call(ctx, t.OriginalName, t.Name, args, t.args, check, opts)
	res, err = t.softened(ctx, res, err)
	return t.limited(t.ifRemoved(ctx, res, err))
}

// ServerArguments returns the arguments the server receives when the tool
// is called with args: what a ToolTransform renamed given back their
// server-side names, hidden values and defaults filled in. For a tool
// without argument transforms it is args. A program that forwards calls
// itself (a gateway) sends these with OriginalName.
func (t *Tool) ServerArguments(args json.RawMessage) json.RawMessage {
	return t.args.Wire(args)
}

// limited gives res the tool's result limit.
func (t *Tool) limited(res *Result, err error) (*Result, error) {
	if res != nil {
		res.SetTextLimit(t.resultLimit())
	}
	return res, err
}

// resultLimit returns the byte limit of the tool's results' text; 0 means
// none.
func (t *Tool) resultLimit() int {
	switch {
	case t.maxResult < 0:
		return 0
	case t.maxResult == 0:
		return DefaultMaxResultBytes
	}
	return t.maxResult
}

// checkCall returns the error text for the model when args (the server's
// arguments, after transforms) break the server's schema, or "".
func (t *Tool) checkCall(args json.RawMessage) string { return t.checkCallAs(args, nil) }

// checkCallAs is checkCall naming each argument by modelPath
// (CallOptions.ArgumentPath), if set, after the tool's own renames.
func (t *Tool) checkCallAs(args json.RawMessage, modelPath func(string) string) string {
	if t.noCheck {
		return ""
	}
	return t.check.Check(t.Name, args, t.args, modelPath)
}

// Client returns the client the tool calls through; nil for search_tools
// and call_tool (Options.ToolSearch), which are answered in this process.
func (t *Tool) Client() *Client { return t.client }

// newTool builds a Tool from a listed go-sdk tool, taking the schemas as
// the server sent them when obs, the observer of the connection that
// listed it, saw them (a nil obs keeps go-sdk's decoding).
func (c *Client) newTool(obs *wire.Observer, t *mcp.Tool) (*Tool, error) {
	out := &Tool{
		Name:         t.Name,
		OriginalName: t.Name,
		Server:       c.name,
		Title:        t.Title,
		Description:  t.Description,
		Annotations:  t.Annotations,
		Meta:         t.Meta,
		Icons:        t.Icons,
		client:       c,
		listedGen:    c.toolsGen.Load(),
	}
	if out.Title == "" && t.Annotations != nil {
		out.Title = t.Annotations.Title
	}
	out.TaskSupport = obs.TaskSupport(t.Name)
	var err error
	if out.InputSchema, out.OutputSchema, err = obs.ToolSchemas(t); err != nil {
		return nil, err
	}
	out.check = argplan.NewChecker(out.InputSchema)
	return out, nil
}

// Tools lists the server's tools, all pages, named for a model (see
// Tool.Name).
func (c *Client) Tools(ctx context.Context) ([]*Tool, error) {
	listed, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	// The schemas as this principal's connection listed them: each
	// principal may be shown other tools under the same names.
	obs := c.eng.Observer(ctx)
	tools := make([]*Tool, 0, len(listed))
	for _, lt := range listed {
		t, err := c.newTool(obs, lt)
		if err != nil {
			return nil, &ContentError{Server: c.name, Tool: lt.Name, Index: -1, Err: err}
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// ListTools returns every tool the server offers, all pages of tools/list,
// as go-sdk decoded them.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	tools, err := listAll(ctx, c, "tools/list", func(ctx context.Context, s *engine.Session, cursor string) ([]*mcp.Tool, string, error) {
		res, err := s.SDK().ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	})
	if err != nil {
		return nil, c.serverErr(err, "tools/list")
	}
	return tools, nil
}
