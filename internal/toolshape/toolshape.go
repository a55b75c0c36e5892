package toolshape

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/argplan"
	"github.com/mcpadapter/mcpadapter/internal/config"
	"github.com/mcpadapter/mcpadapter/internal/servername"
	"github.com/mcpadapter/mcpadapter/internal/truncate"
)

// Server is what an adapter does to one server's tools. A nil *Server
// does nothing.
type Server struct {
	Prefix, Note string
	NoCheck      bool // ServerTransform.SkipArgumentCheck
	// Tools are the tool transforms by the server's name for each.
	Tools map[string]*Tool
}

// Tool is one tool's transform (the root's ToolTransform as values) and
// where it was given.
type Tool struct {
	Name, Description string
	Disabled          bool
	NoCheck           bool // ToolTransform.SkipArgumentCheck
	Timeout           time.Duration
	MaxResultBytes    int
	Task              int // the root's TaskMode
	// Args are the argument transforms by the server's name for each;
	// nil when the transform has none.
	Args map[string]*argplan.Arg
	// Path says where the transform was given (set by New).
	Path string
}

// New checks a server's transform (its prefix, note and tools; a nil
// tool is left out) and returns it as a Server, or the path and text of
// its first problem.
func New(prefix, description string, noCheck bool, tools map[string]*Tool, paths config.Paths) (_ *Server, path, msg string) {
	if prefix != "" && !config.ValidServerName(prefix) {
		return nil, paths.Member(paths.Base, "prefix", "Prefix"), fmt.Sprintf("prefix %q is not allowed: it starts tool names, so it must match ^[A-Za-z0-9_-]{1,64}$", prefix)
	}
	sh := &Server{Prefix: prefix, Note: strings.TrimSpace(description), NoCheck: noCheck, Tools: make(map[string]*Tool, len(tools))}
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tt, tpath := tools[name], paths.Tool(name)
		switch {
		case name == "":
			return nil, tpath, "empty tool name"
		case tt == nil:
			continue
		case tt.Name != "" && !config.ValidServerName(tt.Name):
			return nil, paths.Member(tpath, "name", "Name"), fmt.Sprintf("tool name %q is not allowed: model APIs take names matching ^[A-Za-z0-9_-]{1,64}$", tt.Name)
		case tt.Timeout < 0:
			return nil, paths.Member(tpath, "timeout", "Timeout"), fmt.Sprintf("negative timeout %v; use 0, or leave it out, for the server's", tt.Timeout)
		case tt.MaxResultBytes > 0 && tt.MaxResultBytes < truncate.MinLimit:
			return nil, paths.Member(tpath, "maxResultBytes", "MaxResultBytes"), fmt.Sprintf("%d bytes is too small: want at least %d (room for the truncation note), or a negative number for no limit", tt.MaxResultBytes, truncate.MinLimit)
		}
		if path, msg := checkArgs(tt.Args, tpath, paths); msg != "" {
			return nil, path, msg
		}
		t := *tt
		t.Path = tpath
		sh.Tools[name] = &t
	}
	return sh, "", ""
}

// checkArgs returns the path and text of the first problem of a tool's
// argument transforms, or "".
func checkArgs(args map[string]*argplan.Arg, tpath string, paths config.Paths) (path, msg string) {
	names := make([]string, 0, len(args))
	for an := range args {
		names = append(names, an)
	}
	sort.Strings(names)
	for _, an := range names {
		at, apath := args[an], paths.Arg(tpath, an)
		switch {
		case at == nil:
		case at.Name != "" && !servername.ValidArgName(at.Name):
			return apath, fmt.Sprintf("argument name %q is not allowed: model APIs take argument names matching ^[A-Za-z0-9_.-]{1,64}$", at.Name)
		case len(at.Default) > 0 && !json.Valid(at.Default):
			return apath, "the default is not valid JSON"
		}
	}
	return "", ""
}

// Over returns sh with top's settings over it: top's prefix and note when
// set, and top's transform of a tool instead of sh's.
func (sh *Server) Over(top *Server) *Server {
	switch {
	case top == nil:
		return sh
	case sh == nil:
		return top
	}
	out := &Server{Prefix: sh.Prefix, Note: sh.Note, NoCheck: sh.NoCheck || top.NoCheck, Tools: make(map[string]*Tool, len(sh.Tools)+len(top.Tools))}
	if top.Prefix != "" {
		out.Prefix = top.Prefix
	}
	if top.Note != "" {
		out.Note = top.Note
	}
	for k, v := range sh.Tools {
		out.Tools[k] = v
	}
	for k, v := range top.Tools {
		out.Tools[k] = v
	}
	return out
}

// Tool returns the transform of the tool the server calls name, or nil.
func (sh *Server) Tool(name string) *Tool {
	if sh == nil {
		return nil
	}
	return sh.Tools[name]
}

// Disabled reports whether the shape leaves the tool the server calls
// name out.
func (sh *Server) Disabled(name string) bool {
	t := sh.Tool(name)
	return t != nil && t.Disabled
}

// Unmatched returns the paths of the tool transforms that name no tool
// listed reports listed (by the server's name for it), sorted.
func (sh *Server) Unmatched(listed func(name string) bool) []string {
	if sh == nil {
		return nil
	}
	var out []string
	for name, t := range sh.Tools {
		if !listed(name) {
			out = append(out, t.Path)
		}
	}
	sort.Strings(out)
	return out
}
