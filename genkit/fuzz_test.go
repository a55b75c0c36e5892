package genkit_test

import (
	"encoding/json"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/genkit"
)

// FuzzInterrupts: whatever JSON an interrupted tool request's metadata
// holds (a saved history is input), Interrupts neither panics nor returns
// a pending call without its questions' payload.
func FuzzInterrupts(f *testing.F) {
	f.Add([]byte(`{"mcpadapter":{"type":"mcpadapter.elicitation","tool_name":"book","requests":[{"key":"k","mode":"form","message":"How many?"}]},"mcpadapter_pending":{"Server":"s","Tool":"book","ModelTool":"book","Requests":[{"key":"k","mode":"form","message":"How many?"}]}}`))
	f.Add([]byte(`{"mcpadapter":7,"mcpadapter_pending":"x"}`))
	f.Add([]byte(`true`))
	f.Add([]byte(`{"mcpadapter":{"requests":null},"mcpadapter_pending":{"Arguments":"not json"}}`))
	ts, err := genkit.New([]*mcpadapter.Tool{{Name: "book", Server: "s", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var meta any
		if json.Unmarshal(data, &meta) != nil {
			return
		}
		part := ai.NewToolRequestPart(&ai.ToolRequest{Name: "book", Ref: "c1", Input: map[string]any{}})
		part.Metadata = map[string]any{"interrupt": meta}
		resp := &ai.ModelResponse{Message: ai.NewModelMessage(part)}
		for _, p := range ts.Interrupts(resp) {
			if p.Part != part || p.Interrupt == nil || p.Call == nil {
				t.Fatalf("pending %+v", p)
			}
		}
	})
}
