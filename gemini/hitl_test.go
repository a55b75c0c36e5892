package gemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/gemini"
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
		ts, err := gemini.New(tools, nil)
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, calls []loopproof.ModelCall, ask func(*elicitation.Interrupt) *elicitation.Resume) (any, error) {
			var cs []gemini.Call
			for _, c := range calls {
				var args map[string]any
				_ = json.Unmarshal([]byte(c.Args), &args)
				cs = append(cs, gemini.Call{ID: c.ID, Name: c.Name, Args: args})
			}
			return finishTurn(ctx, ts, cs, ask)
		}
	})
}
