package plaincall

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRound: a result asks for a round when its resultType is
// "input_required", or when it has none and holds inputRequests; a task
// that shows its questions, and a complete result, never do.
func TestRound(t *testing.T) {
	q := `{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Name?"}}}`
	for _, c := range []struct {
		result string
		round  bool
	}{
		{`{"content":[],"resultType":"input_required","inputRequests":` + q + `,"requestState":"s"}`, true},
		{`{"content":[],"inputRequests":` + q + `}`, true},
		{`{"content":[],"resultType":"input_required","inputRequests":{}}`, true}, // load shedding
		{`{"resultType":"task","taskId":"t1","status":"input_required","inputRequests":` + q + `}`, false},
		{`{"content":[],"resultType":"complete","inputRequests":` + q + `}`, false},
		{`{"content":[],"resultType":"input_required"}`, false}, // no questions at all
		{`{"content":[{"type":"text","text":"hi"}]}`, false},
	} {
		res := new(mcp.CallToolResult)
		if err := res.UnmarshalJSON([]byte(c.result)); err != nil {
			t.Fatalf("%s: %v", c.result, err)
		}
		reqs, _, ok := Round(res)
		if ok != c.round || ok && reqs == nil {
			t.Errorf("Round(%s) = %v, want %v", c.result, ok, c.round)
		}
		if AsksInput([]byte(c.result)) != c.round {
			t.Errorf("AsksInput(%s) = %v, want %v", c.result, !c.round, c.round)
		}
	}
	p := &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"k": &mcp.ElicitParams{Message: "?"}}, RequestState: "st"}
	if _, state, ok := Round(p); !ok || state != "st" {
		t.Errorf("a prompts/get result with questions and no type: round %v, state %q", ok, state)
	}
	if _, _, ok := Round(&mcp.ListToolsResult{}); ok {
		t.Error("a tools/list result is a round")
	}
}
