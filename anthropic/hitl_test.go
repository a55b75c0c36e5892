package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/anthropic"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/hitltest/loopproof"
)

// TestDocumentedLoop: docs/human-in-the-loop.md shows finishTurn as it is.
func TestDocumentedLoop(t *testing.T) {
	hitltest.QuotedInDocs(t, "loop_test.go", "finishTurn", "../docs/human-in-the-loop.md")
}

// TestHITLDocumentedLoop runs finishTurn against the scripted user and
// servers of both eras (loopproof.Prove).
func TestHITLDocumentedLoop(t *testing.T) {
	loopproof.Prove(t, func(t *testing.T, tools []*mcpadapter.Tool) loopproof.Loop {
		ts, err := anthropic.New(tools, nil)
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, calls []loopproof.ModelCall, ask func(*elicitation.Interrupt) *elicitation.Resume) (any, error) {
			var cs []anthropic.Call
			for _, c := range calls {
				cs = append(cs, anthropic.Call{ID: c.ID, Name: c.Name, Input: json.RawMessage(c.Args)})
			}
			return finishTurn(ctx, ts, cs, ask)
		}
	})
}
