package taskwire

import (
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCreatedReadsExactNames: a tools/call result is a task by the
// members go-sdk reads, by their exact names, so a result that a hostile
// server spells in two ways is a task or a round, never both and never
// neither: the task is followed, or the round answered.
func TestCreatedReadsExactNames(t *testing.T) {
	q := `{"k":{"method":"elicitation/create","params":{"message":"?"}}}`
	for _, c := range []struct {
		result      string
		task, round bool
	}{
		{`{"resultType":"task","taskId":"a","status":"input_required","inputRequests":` + q + `}`, true, false},
		{`{"ResultType":"task","taskId":"b","status":"input_required","inputRequests":` + q + `}`, false, true},
		{`{"resultType":"task","ResultType":"input_required","taskId":"c","status":"working"}`, true, false},
		{`{"resultType":"input_required","RESULTTYPE":"task","inputRequests":` + q + `}`, false, true},
		{`{"Task":{"taskId":"d","status":"working"}}`, false, false},
		{`{"task":{"taskId":"e","status":"working"}}`, true, false},
		{`{"resultType":7,"task":{"taskId":"f"}}`, false, false},
	} {
		_, _, task, _ := Created(json.RawMessage(c.result))
		round := false
		if res := new(mcp.CallToolResult); res.UnmarshalJSON([]byte(c.result)) == nil {
			_, _, round = plaincall.Round(res)
		}
		if task != c.task || round != c.round {
			t.Errorf("%s: task %v, round %v; want task %v, round %v", c.result, task, round, c.task, c.round)
		}
	}
}
