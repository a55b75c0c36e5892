package toolshape

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/argplan"
	"github.com/mcpadapter/mcpadapter/internal/config"
)

// TestNewFirstProblem: each kind of bad setting is reported at its path,
// in the order of the tools' and arguments' names; a nil tool is left out.
func TestNewFirstProblem(t *testing.T) {
	paths := config.Paths{Base: config.JoinPath("mcpServers", "kb")}
	for _, tt := range []struct {
		prefix string
		tools  map[string]*Tool
		path   string
		msg    string
	}{
		{prefix: "a b", path: "mcpServers.kb.prefix", msg: "prefix"},
		{tools: map[string]*Tool{"": {}}, msg: "empty tool name"},
		{tools: map[string]*Tool{"b": {Name: "x y"}, "a": {Timeout: -1}}, path: "mcpServers.kb.tools.a.timeout", msg: "negative timeout"},
		{tools: map[string]*Tool{"a": {MaxResultBytes: 10}}, path: "mcpServers.kb.tools.a.maxResultBytes", msg: "too small"},
		{tools: map[string]*Tool{"a": {Args: map[string]*argplan.Arg{"q": {Default: json.RawMessage("{")}}}}, path: "mcpServers.kb.tools.a.arguments.q", msg: "not valid JSON"},
		{tools: map[string]*Tool{"a": {Args: map[string]*argplan.Arg{"q": {Name: "a b"}}}}, path: "mcpServers.kb.tools.a.arguments.q", msg: "argument name"},
	} {
		sh, path, msg := New(tt.prefix, "", false, tt.tools, paths)
		if sh != nil || (tt.path != "" && path != tt.path) || !strings.Contains(msg, tt.msg) {
			t.Errorf("%+v: got %v, %q, %q", tt, sh, path, msg)
		}
	}
	sh, _, msg := New("kb", "  a note ", false, map[string]*Tool{"gone": nil, "a": {Disabled: true}}, paths)
	if msg != "" || sh.Note != "a note" || sh.Tool("gone") != nil || !sh.Disabled("a") || sh.Tool("a").Path != "mcpServers.kb.tools.a" {
		t.Fatalf("got %+v, %q", sh, msg)
	}
}

// TestOver: the top shape's prefix, note and tools win; the rest is the
// base's; Unmatched names the transforms of tools not listed.
func TestOver(t *testing.T) {
	paths := config.Paths{Base: "x"}
	base, _, _ := New("base", "base note", false, map[string]*Tool{"a": {Name: "A"}, "b": {Name: "B"}}, paths)
	top, _, _ := New("", "", true, map[string]*Tool{"b": {Name: "B2"}}, config.Paths{API: true, Base: "y"})
	got := base.Over(top)
	if got.Prefix != "base" || got.Note != "base note" || !got.NoCheck || got.Tool("a").Name != "A" || got.Tool("b").Name != "B2" {
		t.Fatalf("got %+v", got)
	}
	if base.Over(nil) != base || (*Server)(nil).Over(top) != top {
		t.Fatal("a nil side is not the other")
	}
	un := got.Unmatched(func(name string) bool { return name == "a" })
	if len(un) != 1 || !strings.HasPrefix(un[0], "y") {
		t.Fatalf("Unmatched: %v", un)
	}
	if (*Server)(nil).Disabled("a") || (*Server)(nil).Unmatched(nil) != nil {
		t.Fatal("a nil shape does something")
	}
}
