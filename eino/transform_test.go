package eino_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestAgentSeesTransformedTools: the binding gets the tools as the
// transforms shaped them (name, description, schema), and the agent's
// calls reach the server under its own names with the arguments it needs.
func TestAgentSeesTransformedTools(t *testing.T) {
	ctx := ctx30(t)
	srv, st := testserver.NewWithState(testserver.Options{})
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Name: "math"})
	if err != nil {
		t.Fatal(err)
	}
	tools := adapterTools(t, c, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{"math": {
		Description: "Calculator.",
		Tools: map[string]*mcpadapter.ToolTransform{"add": {Name: "plus", Arguments: map[string]*mcpadapter.ArgTransform{
			"a": {Name: "x"}, "b": {Hide: true, Default: json.RawMessage(`10`)},
		}}},
	}}})
	var plus *mcpadapter.Tool
	for _, tl := range tools {
		if tl.OriginalName == "add" {
			plus = tl
		}
	}
	et, err := eino.NewTool(plus)
	if err != nil {
		t.Fatal(err)
	}
	info, err := et.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	js, err := info.ToJSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(js)
	if info.Name != "plus" || info.Desc != "Calculator. Add two numbers." || !strings.Contains(string(b), `"x"`) ||
		strings.Contains(string(b), `"a"`) || strings.Contains(string(b), `"b"`) {
		t.Errorf("eino sees %s %q %s", info.Name, info.Desc, b)
	}
	a, err := eino.NewAgent(ctx, &scripted{rounds: [][]schema.ToolCall{{call("c1", "plus", `{"x":2}`)}}}, tools, eino.AgentConfig{})
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, a.Query(ctx, "cp", "2+10?"))
	if r.err != nil || r.final != "final: plus: 12" || string(st.LastArguments("add")) != `{"a":2,"b":10}` {
		t.Errorf("run: %v, final %q, the server got %s", r.err, r.final, st.LastArguments("add"))
	}
}
