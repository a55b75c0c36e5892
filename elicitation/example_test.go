package elicitation_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpadapter/mcpadapter/elicitation"
)

// A server's question and the user's answer, checked against the
// question's schema before anything is sent: a wrong answer is an
// *elicitation.Error naming the field, and defaults are filled in.
func Example() {
	questions := []elicitation.Request{{
		Key:     "booking",
		Mode:    elicitation.ModeForm,
		Message: "How many guests?",
		RequestedSchema: json.RawMessage(`{"type":"object","required":["guests"],"properties":{
			"guests":{"type":"integer","minimum":1,"maximum":12},
			"seating":{"type":"string","enum":["inside","terrace"],"default":"inside"}}}`),
	}}

	_, err := elicitation.Check(questions, &elicitation.Resume{Responses: map[string]elicitation.Response{
		"booking": {Action: elicitation.Accept, Content: map[string]any{"guests": 40}},
	}})
	fmt.Println(err)

	answers, err := elicitation.Check(questions, &elicitation.Resume{Responses: map[string]elicitation.Response{
		"booking": {Action: elicitation.Accept, Content: map[string]any{"guests": 4}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(answers)
	fmt.Println(string(b))
	// Output:
	// elicitation "booking": field "guests": 40 is above the maximum 12
	// {"booking":{"action":"accept","content":{"guests":4,"seating":"inside"}}}
}
