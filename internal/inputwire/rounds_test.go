package inputwire

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRoundsNext: a shed round is sent again, at most MaxShed times in a
// row; the user's questions end the rounds; roots are answered by the
// client, at most MaxAutoRounds times; a URL that is not a web page, and
// a round that mixes the user's questions with the client's, are refused.
func TestRoundsNext(t *testing.T) {
	ctx := context.Background()
	var r Rounds
	for i := 0; i < MaxShed; i++ {
		if st := r.Next(ctx, "t", &mcp.CallToolResult{}); st.Failed != nil || st.Answers != nil || st.Ask != nil || st.Refused != "" {
			t.Fatalf("shed %d: %+v", i, st)
		}
	}
	if st := r.Next(ctx, "t", &mcp.CallToolResult{}); st.Failed == nil || !strings.Contains(st.Failed.Error(), "load shedding") {
		t.Fatalf("past MaxShed: %+v", st)
	}
	ask := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"b": &mcp.ElicitParams{Message: "name?"}, "a": &mcp.ElicitParams{Message: "age?"}}}
	if st := r.Next(ctx, "t", ask); len(st.Ask) != 2 || st.Ask[0].Key != "a" {
		t.Fatalf("questions: %+v", st)
	}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	roots := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}}
	for i := 0; i < MaxAutoRounds; i++ {
		if st := r.Next(ctx, "t", roots); st.Answers["r"] == nil {
			t.Fatalf("roots round %d: %+v", i, st)
		}
	}
	if st := r.Next(ctx, "t", roots); st.Failed == nil {
		t.Fatalf("past MaxAutoRounds: %+v", st)
	}
	bad := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"u": &mcp.ElicitParams{Mode: "url", URL: "javascript:alert(1)"}}}
	if st := (&Rounds{}).Next(ctx, "t", bad); !strings.Contains(st.Refused, "the call was not continued") {
		t.Fatalf("not a web page: %+v", st)
	}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	mixed := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "?"}, "r": &mcp.ListRootsParams{}}}
	if st := (&Rounds{}).Next(ctx, "t", mixed); !strings.Contains(st.Refused, "in the same round") {
		t.Fatalf("mixed: %+v", st)
	}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	sampling := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{}}}
	if st := (&Rounds{}).Next(ctx, "t", sampling); !strings.Contains(st.Refused, "cannot give") {
		t.Fatalf("sampling without a handler: %+v", st)
	}
}

// TestURLQuestions: the URL elicitations of a -32042 error become
// questions, unless one is not a web page.
func TestURLQuestions(t *testing.T) {
	asks, err := URLQuestions(json.RawMessage(`{"elicitations":[{"mode":"url","elicitationId":"e1","url":"https://example.com/consent","message":"Sign in"}]}`))
	if err != nil || len(asks) != 1 || asks[0].Key != "e1" || asks[0].URL != "https://example.com/consent" {
		t.Fatalf("got %+v, %v", asks, err)
	}
	if _, err := URLQuestions(json.RawMessage(`{"elicitations":[{"mode":"url","elicitationId":"e1","url":"file:///etc/passwd"}]}`)); err == nil {
		t.Fatal("a file URL was put to the user")
	}
	if asks, err := URLQuestions(json.RawMessage(`{}`)); err != nil || len(asks) != 0 {
		t.Fatalf("no elicitations: %+v, %v", asks, err)
	}
}
