package openai_test

import (
	"context"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/hitltest/loopproof"
	"github.com/mcpadapter/mcpadapter/openai"
)

// TestDocumentedLoop: docs/human-in-the-loop.md shows finishTurn as it is.
func TestDocumentedLoop(t *testing.T) {
	hitltest.QuotedInDocs(t, "loop_test.go", "finishTurn", "../docs/human-in-the-loop.md")
}

// TestHITLDocumentedLoop runs finishTurn against the scripted user and
// servers of both eras (loopproof.Prove).
func TestHITLDocumentedLoop(t *testing.T) {
	loopproof.Prove(t, func(t *testing.T, tools []*mcpadapter.Tool) loopproof.Loop {
		ts, err := openai.New(tools, nil)
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, calls []loopproof.ModelCall, ask func(*elicitation.Interrupt) *elicitation.Resume) (any, error) {
			var cs []openai.Call
			for _, c := range calls {
				cs = append(cs, openai.Call{ID: c.ID, Name: c.Name, Arguments: c.Args})
			}
			return finishTurn(ctx, ts, cs, ask)
		}
	})
}
