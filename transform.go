package mcpadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/argplan"
	"github.com/mcpadapter/mcpadapter/internal/config"
	"github.com/mcpadapter/mcpadapter/internal/toolshape"
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
// mcpServers config, or an entry of Options.Transforms. It is checked and
// copied when the Group (a config's entry) or the Adapter
// (Options.Transforms) is made: changing a ServerTransform, or a
// ToolTransform or ArgTransform in it, afterwards has no effect; make a
// new Adapter for other transforms.
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
type serverShape = toolshape.Server

// newShape checks st and returns it as a serverShape, or the path and
// text of its first problem.
func newShape(st *ServerTransform, paths config.Paths) (_ *serverShape, path, msg string) {
	if st == nil {
		return nil, "", ""
	}
	tools := make(map[string]*toolshape.Tool, len(st.Tools))
	for name, tt := range st.Tools {
		if tt == nil {
			tools[name] = nil
			continue
		}
		t := &toolshape.Tool{Name: tt.Name, Description: tt.Description, Disabled: tt.Disabled, NoCheck: tt.SkipArgumentCheck,
			Timeout: tt.Timeout, MaxResultBytes: tt.MaxResultBytes, Task: int(tt.Task)}
		if len(tt.Arguments) > 0 {
			t.Args = planArgs(tt.Arguments)
		}
		tools[name] = t
	}
	return toolshape.New(st.Prefix, st.Description, st.SkipArgumentCheck, tools, paths)
}

// applyShape gives t its model-facing name (before any prefix),
// description and input schema. A nil shape leaves t as the server listed
// it.
func applyShape(sh *serverShape, t *Tool) error {
	if sh == nil {
		return nil
	}
	t.noCheck = sh.NoCheck
	if tt := sh.Tool(t.OriginalName); tt != nil {
		t.noCheck = t.noCheck || tt.NoCheck
		if tt.Name != "" {
			t.Name = tt.Name
		}
		if tt.Description != "" {
			t.Description = tt.Description
		}
		t.timeout, t.maxResult = tt.Timeout, tt.MaxResultBytes
		t.task = TaskMode(tt.Task)
		if tt.Args != nil {
			schema, plan, err := argplan.Transform(t.InputSchema, tt.Args)
			if err != nil {
				return &TransformError{Server: t.Server, Tool: t.OriginalName, Path: tt.Path, Msg: err.Error()}
			}
			t.InputSchema, t.args = schema, plan
		}
	}
	if sh.Note != "" {
		t.Description = strings.TrimSpace(sh.Note + " " + t.Description)
	}
	return nil
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
		if sh := c.shape.Over(over); sh != nil {
			out[c] = sh
		}
	}
	return out, nil
}

// planArgs gives argplan the argument transforms as plain values, copied.
func planArgs(in map[string]*ArgTransform) map[string]*argplan.Arg {
	out := make(map[string]*argplan.Arg, len(in))
	for name, a := range in {
		if a != nil {
			// A copy of Default: the caller's bytes may change after New.
			out[name] = &argplan.Arg{Name: a.Name, Description: a.Description, Default: bytes.Clone(a.Default), Hide: a.Hide}
		}
	}
	return out
}
