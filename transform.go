package mcpadapter

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/argplan"
	"github.com/mcpadapter/mcpadapter/internal/config"
	"github.com/mcpadapter/mcpadapter/internal/servername"
)

// PrefixMode says when tool names start with their server's name
// (Options.Prefix).
type PrefixMode int

const (
	// PrefixAuto prefixes names with several servers ("math_add") and not
	// with one ("add"): the default. Adding a second server renames the
	// first one's tools.
	PrefixAuto PrefixMode = iota
	// PrefixAlways prefixes names even with one server, so that names
	// stay the same when servers are added or removed.
	PrefixAlways
	// PrefixNever never prefixes names with the server's name; two
	// servers' tools of the same name are then a *NameCollisionError.
	PrefixNever
)

// ServerTransform shapes what a model sees of one server's tools, as
// FastMCP's tool transformation does: a prefix and a note for every tool,
// and per tool a new name, description and arguments. The server still
// gets its own names and the arguments it expects.
//
// It is the "prefix", "description" and "tools" members of a server in an
// mcpServers config, or an entry of Options.Transforms.
type ServerTransform struct {
	// Prefix starts the names of the server's tools instead of the
	// server's name ("kb" gives kb_search), and is used whatever
	// Options.Prefix says. It must match ^[A-Za-z0-9_-]{1,64}$.
	Prefix string
	// Description is put before the description of each of the server's
	// tools, with a space: a note that tells the model what this server is
	// for ("Internal wiki, not the public web.").
	Description string
	// Tools transform single tools, by the server's name for each.
	Tools map[string]*ToolTransform
	// SkipArgumentCheck sends the model's arguments to every tool of the
	// server unchecked (see Tool.Call): for a server whose schemas say
	// less than it accepts. In a config file: "skipArgumentCheck": true.
	SkipArgumentCheck bool
}

// ToolTransform changes how one tool is shown to a model. Calls still go
// to the server under the tool's own name, with the arguments the server
// expects.
type ToolTransform struct {
	// Name, if set, replaces the tool's name (it is still prefixed as any
	// name is). It must match ^[A-Za-z0-9_-]{1,64}$.
	Name string
	// Description, if set, replaces the tool's description.
	Description string
	// Disabled leaves the tool out ("enabled": false).
	Disabled bool
	// Arguments transform the tool's arguments, by the server's name for
	// each: the properties of its input schema.
	Arguments map[string]*ArgTransform
	// Timeout, if positive, bounds each call of the tool instead of
	// ClientOptions.Timeout ("timeout" of the tool in a config file);
	// CallOptions.Timeout still wins.
	Timeout time.Duration
	// MaxResultBytes, if not zero, is the tool's own limit on the text of
	// its results that reaches a model, instead of Options.MaxResultBytes
	// ("maxResultBytes" of the tool in a config file); negative means no
	// limit. At least 256 when positive.
	MaxResultBytes int
	// Task, unless TaskDefault, is the tool's TaskMode: it applies to
	// calls whose CallOptions.Task is TaskDefault (config: "tasks").
	Task TaskMode
	// SkipArgumentCheck sends the model's arguments to the server
	// unchecked (see Tool.Call). In a config file: "skipArgumentCheck":
	// true in the tool's entry.
	SkipArgumentCheck bool
}

// ArgTransform changes one argument of a tool.
type ArgTransform struct {
	// Name, if set, is the argument's name as the model sees it; the
	// server still gets its own name. (An argument the model sends under
	// the server's name reaches the server as it is, unless the model
	// sends the renamed one too, which wins.)
	Name string
	// Description, if set, replaces the argument's description.
	Description string
	// Default, if set, is a JSON value sent when the model leaves the
	// argument out; the schema shows it as the default and no longer
	// requires the argument.
	Default json.RawMessage
	// Hide removes the argument from the schema the model sees. Default,
	// if set, is then always sent in its place, whatever the model sends
	// (a fixed value: a tenant, an API version); without a Default the
	// argument is never sent, which a server requiring it refuses (a
	// *TransformError when the tools are listed).
	Hide bool
}

// TransformError reports a tool transform that cannot be applied: a
// setting that is not allowed, or one that does not fit the tool the
// server lists (an argument its schema does not have). A transform that
// does not fit makes its server's listing fail.
type TransformError struct {
	// Server names the server; Tool is the server's name for the tool, or
	// "" for the server's own settings.
	Server, Tool string
	// Path says where the transform was given: a config's JSON path
	// ("mcpServers.kb.tools.search.arguments") or the Options field
	// (`Options.Transforms["kb"].Tools["search"].Arguments`).
	Path string
	// Msg says what is wrong.
	Msg string
}

func (e *TransformError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpadapter: server %q", e.Server)
	if e.Tool != "" {
		fmt.Fprintf(&b, ", tool %q", e.Tool)
	}
	fmt.Fprintf(&b, ": %s: %s", e.Path, e.Msg)
	return b.String()
}

// serverShape is what an adapter does to one server's tools: the
// transform of its config entry with those of Options.Transforms over it.
type serverShape struct {
	prefix, note string
	noCheck      bool // ServerTransform.SkipArgumentCheck
	tools        map[string]toolShape
}

// toolShape is one tool's transform and where it was given.
type toolShape struct {
	t    *ToolTransform
	path string
}

// newShape checks st and returns it as a serverShape, or the path and
// text of its first problem.
func newShape(st *ServerTransform, paths config.Paths) (_ *serverShape, path, msg string) {
	if st == nil {
		return nil, "", ""
	}
	if st.Prefix != "" && !config.ValidServerName(st.Prefix) {
		return nil, paths.Member(paths.Base, "prefix", "Prefix"), fmt.Sprintf("prefix %q is not allowed: it starts tool names, so it must match ^[A-Za-z0-9_-]{1,64}$", st.Prefix)
	}
	sh := &serverShape{prefix: st.Prefix, note: strings.TrimSpace(st.Description), noCheck: st.SkipArgumentCheck, tools: make(map[string]toolShape, len(st.Tools))}
	names := make([]string, 0, len(st.Tools))
	for name := range st.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tt, tpath := st.Tools[name], paths.Tool(name)
		switch {
		case name == "":
			return nil, tpath, "empty tool name"
		case tt == nil:
			continue
		case tt.Name != "" && !config.ValidServerName(tt.Name):
			return nil, paths.Member(tpath, "name", "Name"), fmt.Sprintf("tool name %q is not allowed: model APIs take names matching ^[A-Za-z0-9_-]{1,64}$", tt.Name)
		case tt.Timeout < 0:
			return nil, paths.Member(tpath, "timeout", "Timeout"), fmt.Sprintf("negative timeout %v; use 0, or leave it out, for the server's", tt.Timeout)
		case tt.MaxResultBytes > 0 && tt.MaxResultBytes < minResultLimit:
			return nil, paths.Member(tpath, "maxResultBytes", "MaxResultBytes"), fmt.Sprintf("%d bytes is too small: want at least %d (room for the truncation note), or a negative number for no limit", tt.MaxResultBytes, minResultLimit)
		}
		args := make([]string, 0, len(tt.Arguments))
		for an := range tt.Arguments {
			args = append(args, an)
		}
		sort.Strings(args)
		for _, an := range args {
			at, apath := tt.Arguments[an], paths.Arg(tpath, an)
			switch {
			case at == nil:
			case at.Name != "" && !servername.ValidArgName(at.Name):
				return nil, apath, fmt.Sprintf("argument name %q is not allowed: model APIs take argument names matching ^[A-Za-z0-9_.-]{1,64}$", at.Name)
			case len(at.Default) > 0 && !json.Valid(at.Default):
				return nil, apath, "the default is not valid JSON"
			}
		}
		sh.tools[name] = toolShape{t: tt, path: tpath}
	}
	return sh, "", ""
}

// over returns sh with top's settings over it: top's prefix and note when
// set, and top's transform of a tool instead of sh's.
func (sh *serverShape) over(top *serverShape) *serverShape {
	switch {
	case top == nil:
		return sh
	case sh == nil:
		return top
	}
	out := &serverShape{prefix: sh.prefix, note: sh.note, noCheck: sh.noCheck || top.noCheck, tools: make(map[string]toolShape, len(sh.tools)+len(top.tools))}
	if top.prefix != "" {
		out.prefix = top.prefix
	}
	if top.note != "" {
		out.note = top.note
	}
	for k, v := range sh.tools {
		out.tools[k] = v
	}
	for k, v := range top.tools {
		out.tools[k] = v
	}
	return out
}

// apply gives t its model-facing name (before any prefix), description and
// input schema. A nil shape leaves t as the server listed it.
func (sh *serverShape) apply(t *Tool) error {
	if sh == nil {
		return nil
	}
	ts := sh.tools[t.OriginalName]
	t.noCheck = sh.noCheck
	if tt := ts.t; tt != nil {
		t.noCheck = t.noCheck || tt.SkipArgumentCheck
		if tt.Name != "" {
			t.Name = tt.Name
		}
		if tt.Description != "" {
			t.Description = tt.Description
		}
		t.timeout, t.maxResult = tt.Timeout, tt.MaxResultBytes
		t.task = tt.Task
		if len(tt.Arguments) > 0 {
			schema, plan, err := argplan.Transform(t.InputSchema, planArgs(tt.Arguments))
			if err != nil {
				return &TransformError{Server: t.Server, Tool: t.OriginalName, Path: ts.path, Msg: err.Error()}
			}
			t.InputSchema, t.args = schema, plan
		}
	}
	if sh.note != "" {
		t.Description = strings.TrimSpace(sh.note + " " + t.Description)
	}
	return nil
}

// disabled reports whether the shape leaves the tool the server calls
// name out.
func (sh *serverShape) disabled(name string) bool {
	return sh != nil && sh.tools[name].t != nil && sh.tools[name].t.Disabled
}

// unmatched returns the paths of the tool transforms that name no tool of
// listed.
func (sh *serverShape) unmatched(listed []*Tool) []string {
	if sh == nil {
		return nil
	}
	var out []string
	for name, ts := range sh.tools {
		if !slices.ContainsFunc(listed, func(t *Tool) bool { return t.OriginalName == name }) {
			out = append(out, ts.path)
		}
	}
	sort.Strings(out)
	return out
}

// configShape returns the shape of a config server's entry, or its first
// problem as a *ConfigError.
func configShape(sc *ServerConfig) (*serverShape, error) {
	if sc.Prefix == "" && sc.Description == "" && len(sc.Tools) == 0 && !sc.SkipArgumentCheck {
		return nil, nil
	}
	st := &ServerTransform{Prefix: sc.Prefix, Description: sc.Description, Tools: sc.Tools, SkipArgumentCheck: sc.SkipArgumentCheck}
	sh, path, msg := newShape(st, config.Paths{Base: config.JoinPath("mcpServers", sc.Name)})
	if msg != "" {
		return nil, &ConfigError{Path: path, Msg: msg}
	}
	return sh, nil
}

// adapterShapes returns the shape of each of g's servers: its config
// entry's, with Options.Transforms over it. A transform for a server g
// does not have is an error.
func adapterShapes(g *Group, transforms map[string]*ServerTransform) (map[*Client]*serverShape, error) {
	names := make([]string, 0, len(transforms))
	for name := range transforms {
		names = append(names, name)
	}
	sort.Strings(names)
	top := make(map[string]*serverShape, len(transforms))
	for _, name := range names {
		base := "Options.Transforms[" + strconv.Quote(name) + "]"
		if g.Client(name) == nil {
			var servers []string
			for _, c := range g.clients {
				servers = append(servers, strconv.Quote(c.nameNow()))
			}
			return nil, &TransformError{Server: name, Path: base, Msg: "there is no server of that name; the servers are " + strings.Join(servers, ", ")}
		}
		sh, path, msg := newShape(transforms[name], config.Paths{API: true, Base: base})
		if msg != "" {
			return nil, &TransformError{Server: name, Path: path, Msg: msg}
		}
		top[name] = sh
	}
	out := make(map[*Client]*serverShape, len(g.clients))
	for _, c := range g.clients {
		var over *serverShape
		if len(top) > 0 {
			over = top[c.nameNow()]
		}
		if sh := c.shape.over(over); sh != nil {
			out[c] = sh
		}
	}
	return out, nil
}

// planArgs gives argplan the argument transforms as plain values.
func planArgs(in map[string]*ArgTransform) map[string]*argplan.Arg {
	out := make(map[string]*argplan.Arg, len(in))
	for name, a := range in {
		if a != nil {
			out[name] = &argplan.Arg{Name: a.Name, Description: a.Description, Default: a.Default, Hide: a.Hide}
		}
	}
	return out
}
