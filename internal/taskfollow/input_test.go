package taskfollow

import (
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/taskwire"
)

// TestQuestionsHostile: the inputRequests of a task waiting for input are
// whatever its server wrote. A null question, a question that is not an
// object, or no questions at all is an error (the task's questions cannot
// be read); nothing panics. Well-formed questions are read.
func TestQuestionsHostile(t *testing.T) {
	for _, bad := range []string{
		`{"q":null}`,
		`{"a":{"method":"roots/list"},"q":null}`,
		`{"q":1}`,
		`{"q":"x"}`,
		`{"q":[]}`,
		`{}`,
		`null`,
		`[]`,
	} {
		reqs, err := Questions(&taskwire.State{InputRequests: json.RawMessage(bad)})
		if err == nil {
			t.Errorf("%s: read as %v", bad, reqs)
		}
	}
	reqs, err := Questions(&taskwire.State{InputRequests: json.RawMessage(`{"r":{"method":"roots/list","params":{}},"e":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}}`)})
	if err != nil || len(reqs) != 2 || reqs["r"] == nil || reqs["e"] == nil {
		t.Fatalf("well-formed questions: %v, %v", reqs, err)
	}
}
