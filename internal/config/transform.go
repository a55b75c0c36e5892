package config

import (
	"encoding/json"
	"strconv"
	"time"
)

// Tool is one member of a server's "tools" object: how to show one of the
// server's tools to a model (FastMCP's tool transformation).
type Tool struct {
	// Name is "name": the tool's new name, which matches ValidServerName.
	Name string
	// Description is "description": it replaces the tool's own.
	Description string
	// Disabled is set by "enabled": false; the tool is left out.
	Disabled bool
	// Arguments is "arguments": by the server's name for each argument.
	Arguments map[string]*Argument
	// Timeout is "timeout": the tool's calls' timeout.
	Timeout time.Duration
	// MaxResultBytes is "maxResultBytes": the tool's limit on result text
	// for a model; negative means none.
	MaxResultBytes int
	// Tasks is "tasks": "auto", "prefer" or "never" (MCP tasks), or "".
	Tasks string
	// SkipArgumentCheck is "skipArgumentCheck": the model's arguments go
	// to the tool unchecked.
	SkipArgumentCheck bool
}

// Argument is one member of a tool's "arguments" object.
type Argument struct {
	// Name is "name": the argument's name as the model sees it.
	Name string
	// Description is "description": it replaces the argument's own.
	Description string
	// Default is "default", verbatim JSON, or nil when absent or null.
	Default json.RawMessage
	// Hide is "hide": the argument is not shown to the model, and Default,
	// if any, is sent in its place.
	Hide bool
}

// maxConcurrentCalls returns the "maxConcurrentCalls" member f: a
// non-negative whole number (0: no cap).
func (p *parser) maxConcurrentCalls(f member, path string) int {
	n, err := strconv.ParseInt(string(f.val), 10, 32)
	if err != nil || n < 0 {
		p.errorf(f.off, path, "want a whole number of calls (0 for no cap), not %s", f.val)
		return 0
	}
	return int(n)
}

// resultBytes returns a "maxResultBytes" member f: a whole number of
// bytes, negative for no limit.
func (p *parser) resultBytes(f member, path string) int {
	n, err := strconv.ParseInt(string(f.val), 10, 32)
	if err != nil {
		p.errorf(f.off, path, "want a whole number of bytes (negative for no limit), not %s", f.val)
		return 0
	}
	return int(n)
}

// prefix returns the "prefix" member f: a name for the server's tools.
func (p *parser) prefix(f member, path string) string {
	if f.val[0] != '"' {
		p.errorf(f.off, path, "want a string, not %s", jsonKind(f.val))
		return ""
	}
	s := rawString(f)
	if !ValidServerName(s) {
		p.errorf(f.off, path, "prefix %q is not allowed: it starts tool names (kb_search), so it must match ^[A-Za-z0-9_-]+$ and be at most %d bytes", s, MaxServerName)
	}
	return s
}

// taskMode returns the "tasks" member f: when tool calls run as MCP
// tasks.
func (p *parser) taskMode(f member, path string) string {
	s := p.plainString(f, path)
	switch s {
	case "auto", "prefer", "never":
		return s
	}
	if f.val[0] == '"' {
		p.errorf(f.off, path, `unknown task mode %q; want "auto" (when the tool requires it or the server chooses), "prefer" (whenever the tool allows) or "never"`, s)
	}
	return ""
}

// plainString returns the string f, as written (no variables expanded).
func (p *parser) plainString(f member, path string) string {
	if f.val[0] != '"' {
		p.errorf(f.off, path, "want a string, not %s", jsonKind(f.val))
		return ""
	}
	return rawString(f)
}

// boolean returns the boolean f.
func (p *parser) boolean(f member, path string) bool {
	switch string(f.val) {
	case "true":
		return true
	case "false":
		return false
	}
	p.errorf(f.off, path, "want true or false, not %s", jsonKind(f.val))
	return false
}

// tools returns the "tools" member f, an object: the transforms of the
// server's tools, by the server's name for each tool.
func (p *parser) tools(f member, path string) map[string]*Tool {
	var out map[string]*Tool
	for _, m := range p.members(f.val, f.off, path, "tool") {
		tpath := joinPath(path, m.key)
		if m.key == "" {
			p.errorf(m.keyOff, tpath, "empty tool name")
			continue
		}
		if m.val[0] != '{' {
			p.errorf(m.off, tpath, `want an object such as {"name": "...", "description": "...", "arguments": {...}}, not %s`, jsonKind(m.val))
			continue
		}
		if out == nil {
			out = make(map[string]*Tool)
		}
		out[m.key] = p.tool(m, tpath)
	}
	return out
}

// tool returns one tool's transform, the object m.
func (p *parser) tool(m member, path string) *Tool {
	t := &Tool{}
	for _, e := range p.members(m.val, m.off, path, "member") {
		epath := joinPath(path, e.key)
		if string(e.val) == "null" {
			continue
		}
		switch e.key {
		case "name":
			t.Name = p.plainString(e, epath)
			if e.val[0] == '"' && !ValidServerName(t.Name) {
				p.errorf(e.off, epath, "tool name %q is not allowed: model APIs take names matching ^[A-Za-z0-9_-]{1,64}$", t.Name)
			}
		case "description":
			t.Description = p.plainString(e, epath)
		case "enabled":
			t.Disabled = !p.boolean(e, epath)
		case "arguments":
			t.Arguments = p.arguments(e, epath)
		case "timeout":
			t.Timeout = p.timeout(e, epath)
		case "maxResultBytes":
			t.MaxResultBytes = p.resultBytes(e, epath)
		case "tasks":
			t.Tasks = p.taskMode(e, epath)
		case "skipArgumentCheck":
			t.SkipArgumentCheck = p.boolean(e, epath)
		default:
			p.errorf(e.keyOff, epath, "unknown tool member %q; want name, description, enabled, arguments, timeout, maxResultBytes, tasks or skipArgumentCheck", e.key)
		}
	}
	return t
}

// arguments returns a tool's "arguments" object f.
func (p *parser) arguments(f member, path string) map[string]*Argument {
	if f.val[0] != '{' {
		p.errorf(f.off, path, `want an object of arguments by name, such as {"limit": {"default": 10}}, not %s`, jsonKind(f.val))
		return nil
	}
	var out map[string]*Argument
	for _, m := range p.members(f.val, f.off, path, "argument") {
		apath := joinPath(path, m.key)
		if m.val[0] != '{' {
			p.errorf(m.off, apath, `want an object such as {"default": 10, "hide": true}, not %s`, jsonKind(m.val))
			continue
		}
		a := &Argument{}
		for _, e := range p.members(m.val, m.off, apath, "member") {
			epath := joinPath(apath, e.key)
			if string(e.val) == "null" {
				continue
			}
			switch e.key {
			case "name":
				if a.Name = p.plainString(e, epath); e.val[0] == '"' && a.Name == "" {
					p.errorf(e.off, epath, "empty argument name")
				}
			case "description":
				a.Description = p.plainString(e, epath)
			case "default":
				a.Default = append(json.RawMessage(nil), e.val...)
			case "hide":
				a.Hide = p.boolean(e, epath)
			default:
				p.errorf(e.keyOff, epath, "unknown argument member %q; want name, description, default or hide", e.key)
			}
		}
		if out == nil {
			out = make(map[string]*Argument)
		}
		out[m.key] = a
	}
	return out
}

// JoinPath appends key to a JSON path as the parser's problems write it:
// as .key when key is made of [A-Za-z0-9_-], else as ["key"].
func JoinPath(path, key string) string { return joinPath(path, key) }

// Paths writes the paths of a tool transform's parts, as errors name
// them: a config's JSON paths (mcpServers.kb.tools.search), or with API
// set the fields of the public options
// (Options.Transforms["kb"].Tools["search"]).
type Paths struct {
	API  bool
	Base string // the server's transform: mcpServers.kb, or Options.Transforms["kb"]
}

// Member returns the path of a member of the part at path: configName in
// a config, apiName in the API.
func (p Paths) Member(path, configName, apiName string) string {
	if p.API {
		return path + "." + apiName
	}
	return joinPath(path, configName)
}

// Tool returns the path of the transform of the tool the server calls
// name.
func (p Paths) Tool(name string) string {
	if p.API {
		return p.Base + ".Tools[" + strconv.Quote(name) + "]"
	}
	return joinPath(joinPath(p.Base, "tools"), name)
}

// Arg returns the path of the transform of argument name of the tool at
// toolPath.
func (p Paths) Arg(toolPath, name string) string {
	if p.API {
		return toolPath + ".Arguments[" + strconv.Quote(name) + "]"
	}
	return joinPath(joinPath(toolPath, "arguments"), name)
}
