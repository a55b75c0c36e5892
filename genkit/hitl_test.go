package genkit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/genkit"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/hitltest/loopproof"
)

// TestDocumentedLoop: docs/human-in-the-loop.md shows generateWithUser
// as it is.
func TestDocumentedLoop(t *testing.T) {
	hitltest.QuotedInDocs(t, "loop_test.go", "generateWithUser", "../docs/human-in-the-loop.md")
}

// TestHITLDocumentedLoop runs generateWithUser against the scripted user
// and servers of both eras (loopproof.Prove), with a scripted model that
// makes the turn's tool requests and then repeats what they returned.
func TestHITLDocumentedLoop(t *testing.T) {
	loopproof.Prove(t, func(t *testing.T, tools []*mcpadapter.Tool) loopproof.Loop {
		ts, err := genkit.New(tools, nil)
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, calls []loopproof.ModelCall, ask func(*elicitation.Interrupt) *elicitation.Resume) (any, error) {
			var reqs []*ai.ToolRequest
			for _, c := range calls {
				var in map[string]any
				_ = json.Unmarshal([]byte(c.Args), &in)
				reqs = append(reqs, &ai.ToolRequest{Name: c.Name, Ref: c.ID, Input: in})
			}
			g, m := scripted(t, reqs...)
			resp, err := generateWithUser(ctx, g, m, ts, "go", ask)
			if err != nil {
				return nil, err
			}
			return resp.Text(), nil
		}
	})
}
