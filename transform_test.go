package mcpadapter_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// schemaOf decodes a tool's input schema.
func schemaOf(t *testing.T, tool *mcpadapter.Tool) (props map[string]map[string]any, required []string) {
	t.Helper()
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
		t.Fatalf("%s: schema %s: %v", tool.Name, tool.InputSchema, err)
	}
	return s.Properties, s.Required
}

// wireArgs returns what the server received as the last call of tool.
func wireArgs(t *testing.T, st *testserver.State, tool string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(st.LastArguments(tool), &m); err != nil {
		t.Fatalf("%s: arguments %s: %v", tool, st.LastArguments(tool), err)
	}
	return m
}

// TestTransformsConfig: the transforms of a config reach the model (names,
// descriptions, schemas) and the server gets its own names and the
// arguments it expects: hidden ones fixed, defaults filled in, renamed
// ones under their names.
func TestTransformsConfig(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	cfg := parseConfig(t, `{"mcpServers": {"kb": {"url": "${URL}", "prefix": "docs", "description": "Test server, not production.",
		"tools": {
			"echo": {"name": "say", "description": "Say the text back."},
			"add":  {"arguments": {"b": {"hide": true, "default": 10}, "a": {"name": "x", "default": 1, "description": "The first number."}}},
			"fail": {"enabled": false}
		}}}}`, map[string]string{"URL": url})
	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)

	if tools["docs_echo"] != nil || tools["docs_fail"] != nil || tools["fail"] != nil {
		t.Errorf("renamed or disabled tools still listed: %v", keys(tools))
	}
	say := tools["docs_say"]
	if say == nil || say.OriginalName != "echo" || say.Description != "Test server, not production. Say the text back." ||
		say.Meta[mcpadapter.MetaOriginalName] != "echo" {
		t.Fatalf("say: %+v (tools %v)", say, keys(tools))
	}
	if slow := tools["docs_slow"]; slow == nil || slow.Description != "Test server, not production. Sleep for ms milliseconds." {
		t.Errorf("the server's note is not before slow's description: %+v", slow)
	}
	add := tools["docs_add"]
	props, required := schemaOf(t, add)
	if _, ok := props["b"]; ok || props["a"] != nil || len(required) != 0 {
		t.Errorf("add's schema shows b, a or required: %s", add.InputSchema)
	}
	if x := props["x"]; x["type"] != "number" || x["default"] != 1.0 || x["description"] != "The first number." {
		t.Errorf("add's x: %v (schema %s)", x, add.InputSchema)
	}

	if got := mustCall(t, ctx, say, `{"text":"hi"}`).Text(); got != "hi" || st.Calls("say") != 0 ||
		!reflect.DeepEqual(wireArgs(t, st, "echo"), map[string]any{"text": "hi"}) {
		t.Errorf("say: %q; the server got say %d times, echo with %s", got, st.Calls("say"), st.LastArguments("echo"))
	}
	for _, c := range []struct {
		args string
		sum  string
		wire map[string]any
	}{
		{`{"x":2}`, "12", map[string]any{"a": 2.0, "b": 10.0}},
		{``, "11", map[string]any{"a": 1.0, "b": 10.0}},
		{`{"x":5,"b":99}`, "15", map[string]any{"a": 5.0, "b": 10.0}}, // a hidden value is fixed
		{`{"b":99,"a":7}`, "17", map[string]any{"a": 7.0, "b": 10.0}}, // a is shown as x; sent as a, it still reaches the server
	} {
		res := mustCall(t, ctx, add, c.args)
		if res.IsError || res.Text() != c.sum || !reflect.DeepEqual(wireArgs(t, st, "add"), c.wire) {
			t.Errorf("add(%s) = %q (error %v); the server got %s, want %v", c.args, res.Text(), res.IsError, st.LastArguments("add"), c.wire)
		}
	}
	if st.Calls("fail") != 0 {
		t.Error("a disabled tool was called")
	}
}

// TestTransformsOptions: Options.Transforms does the same from code, over
// the config's transforms tool by tool.
func TestTransformsOptions(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	cfg := parseConfig(t, `{"mcpServers": {"math": {"url": "${URL}", "description": "From the config.",
		"tools": {"add": {"name": "config_add"}, "echo": {"name": "config_echo"}}}}}`, map[string]string{"URL": url})
	a, err := mcpadapter.New(cfg, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{
		"math": {Tools: map[string]*mcpadapter.ToolTransform{
			"add": {Name: "plus", Arguments: map[string]*mcpadapter.ArgTransform{"a": {Default: json.RawMessage(`5`)}}},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	plus, echo := tools["plus"], tools["config_echo"]
	if plus == nil || echo == nil || tools["config_add"] != nil {
		t.Fatalf("tools %v: want plus (Options over the config) and config_echo", keys(tools))
	}
	if !strings.HasPrefix(plus.Description, "From the config. Add") {
		t.Errorf("plus: description %q", plus.Description)
	}
	if props, required := schemaOf(t, plus); props["a"]["default"] != 5.0 || !slices.Equal(required, []string{"b"}) {
		t.Errorf("plus: schema %s", plus.InputSchema)
	}
	if got := mustCall(t, ctx, plus, `{"b":1}`).Text(); got != "6" || !bytes.Equal(st.LastArguments("add"), []byte(`{"b":1,"a":5}`)) {
		t.Errorf("plus: %q, the server got %s", got, st.LastArguments("add"))
	}
}

func TestTransformErrors(t *testing.T) {
	ctx := testCtx(t)
	newMath := func(t *testing.T) *mcpadapter.Client {
		c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Name: "math"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	args := func(m map[string]*mcpadapter.ArgTransform) map[string]*mcpadapter.ServerTransform {
		return map[string]*mcpadapter.ServerTransform{"math": {Tools: map[string]*mcpadapter.ToolTransform{"add": {Arguments: m}}}}
	}
	// Settings that are wrong whatever the server lists: New fails.
	for _, c := range []struct {
		name string
		tr   map[string]*mcpadapter.ServerTransform
		want string
	}{
		{"unknown server", map[string]*mcpadapter.ServerTransform{"maths": {}},
			`mcpadapter: server "maths": Options.Transforms["maths"]: there is no server of that name; the servers are "math"`},
		{"bad prefix", map[string]*mcpadapter.ServerTransform{"math": {Prefix: "m a"}},
			`mcpadapter: server "math": Options.Transforms["math"].Prefix: prefix "m a" is not allowed`},
		{"bad tool name", map[string]*mcpadapter.ServerTransform{"math": {Tools: map[string]*mcpadapter.ToolTransform{"add": {Name: "add!"}}}},
			`mcpadapter: server "math": Options.Transforms["math"].Tools["add"].Name: tool name "add!" is not allowed`},
		{"bad default", args(map[string]*mcpadapter.ArgTransform{"a": {Default: json.RawMessage(`{`)}}),
			`mcpadapter: server "math": Options.Transforms["math"].Tools["add"].Arguments["a"]: the default is not valid JSON`},
		{"bad argument name", args(map[string]*mcpadapter.ArgTransform{"a": {Name: "a b"}}),
			`Options.Transforms["math"].Tools["add"].Arguments["a"]: argument name "a b" is not allowed`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mcpadapter.New(newMath(t), &mcpadapter.Options{Transforms: c.tr})
			var te *mcpadapter.TransformError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %v, want a TransformError with %q", err, c.want)
			}
		})
	}
	// Settings that do not fit the tool: that server's listing fails.
	for _, c := range []struct {
		name string
		args map[string]*mcpadapter.ArgTransform
		want string
	}{
		{"no such argument", map[string]*mcpadapter.ArgTransform{"c": {Default: json.RawMessage(`1`)}},
			`mcpadapter: server "math", tool "add": Options.Transforms["math"].Tools["add"]: argument "c": the tool's input schema has no such property (it has: "a", "b")`},
		{"hidden required argument without a default", map[string]*mcpadapter.ArgTransform{"a": {Hide: true}},
			`argument "a": the server requires it, so hiding it needs a default to send in its place`},
		{"two arguments of one name", map[string]*mcpadapter.ArgTransform{"a": {Name: "b"}},
			`arguments "a" and "b" would both be shown to the model as "b"`},
		{"two renamed to one name", map[string]*mcpadapter.ArgTransform{"a": {Name: "n"}, "b": {Name: "n"}},
			`arguments "a" and "b" are both renamed to "n"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := mcpadapter.New(newMath(t), &mcpadapter.Options{Transforms: args(c.args)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Tools(ctx)
			var te *mcpadapter.TransformError
			if !errors.As(err, &te) || te.Server != "math" || te.Tool != "add" || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Tools: %v, want a TransformError with %q", err, c.want)
			}
		})
	}
	t.Run("rename onto another tool", func(t *testing.T) {
		a, err := mcpadapter.New(newMath(t), &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{
			"math": {Tools: map[string]*mcpadapter.ToolTransform{"add": {Name: "echo"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		var ce *mcpadapter.NameCollisionError
		if _, err := a.Tools(ctx); !errors.As(err, &ce) || ce.Name != "echo" {
			t.Errorf("Tools: %v, want a NameCollisionError for echo", err)
		}
	})
	t.Run("hand-built config", func(t *testing.T) {
		cfg := parseConfig(t, `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}`, nil)
		cfg.Servers[1].Tools = map[string]*mcpadapter.ToolTransform{"t": {Name: "bad name"}}
		_, err := mcpadapter.NewGroup(cfg, nil)
		var ce *mcpadapter.ConfigError
		if !errors.As(err, &ce) || ce.Path != "mcpServers.b.tools.t.name" {
			t.Errorf("NewGroup: %v, want a ConfigError at mcpServers.b.tools.t.name", err)
		}
	})
	t.Run("unknown tool is a warning", func(t *testing.T) {
		var logs syncBuffer
		c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Name: "math", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a, err := mcpadapter.New(c, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{
			"math": {Tools: map[string]*mcpadapter.ToolTransform{"ad": {Name: "plus"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Tools(ctx); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), `level=WARN msg="a tool transform names a tool the server does not list" server=math at="Options.Transforms[\"math\"].Tools[\"ad\"]"`) {
			t.Errorf("log:\n%s", logs.String())
		}
	})
}

// TestTransformsReadAtNew: New reads Options.Transforms once; a transform
// changed afterwards (a tool's name or timeout, an argument's default,
// even in place, a tool transform added) changes nothing the model sees
// or the server gets.
func TestTransformsReadAtNew(t *testing.T) {
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	cfg := parseConfig(t, `{"mcpServers": {"math": {"url": "${URL}"}}}`, map[string]string{"URL": url})
	def := json.RawMessage(`5`)
	add := &mcpadapter.ToolTransform{Name: "plus", Arguments: map[string]*mcpadapter.ArgTransform{"a": {Default: def}}}
	sht := &mcpadapter.ServerTransform{Description: "Math.", Tools: map[string]*mcpadapter.ToolTransform{"add": add}}
	a, err := mcpadapter.New(cfg, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{"math": sht}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	add.Name, add.Timeout, add.Disabled = "not a name!", -1, true
	add.Arguments["a"].Name = "renamed"
	def[0] = '9'
	sht.Description = "Changed."
	sht.Tools["echo"] = &mcpadapter.ToolTransform{Name: "shout"}

	tools := toolMap(t, ctx, a)
	plus := tools["plus"]
	if plus == nil || tools["echo"] == nil || tools["shout"] != nil {
		t.Fatalf("tools %v: want plus and echo as given to New", keys(tools))
	}
	if !strings.HasPrefix(plus.Description, "Math. ") {
		t.Errorf("plus: description %q", plus.Description)
	}
	if props, _ := schemaOf(t, plus); props["a"]["default"] != 5.0 || props["renamed"] != nil {
		t.Errorf("plus: schema %s", plus.InputSchema)
	}
	if got := mustCall(t, ctx, plus, `{"b":1}`).Text(); got != "6" || !bytes.Equal(st.LastArguments("add"), []byte(`{"b":1,"a":5}`)) {
		t.Errorf("plus: %q, the server got %s", got, st.LastArguments("add"))
	}
}
