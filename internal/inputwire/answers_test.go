package inputwire

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRequestMode: an elicitation with a URL and no mode is a URL
// question, one that says "form" stays a form; the schema is kept.
func TestRequestMode(t *testing.T) {
	if r := Request("k", &mcp.ElicitParams{Message: "visit", URL: "https://example.com/"}); r.Mode != elicitation.ModeURL || r.Key != "k" {
		t.Errorf("URL without mode: %+v", r)
	}
	if r := Request("k", &mcp.ElicitParams{Mode: "form", URL: "https://example.com/"}); r.Mode != elicitation.ModeForm {
		t.Errorf("form with a URL: %+v", r)
	}
	r := Request("k", &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})
	if r.Mode != elicitation.ModeForm || string(r.RequestedSchema) != `{"type":"object"}` {
		t.Errorf("form: %+v", r)
	}
	if p := Print("k", &mcp.ElicitParams{Message: "name?"}); !strings.Contains(p, `"name?"`) {
		t.Errorf("Print: %s", p)
	}
}

// TestSummary: a cancel wins over a decline, a decline over accepts; no
// answers resume a queued call.
func TestSummary(t *testing.T) {
	a := func(acts ...elicitation.Action) map[string]elicitation.Response {
		m := make(map[string]elicitation.Response)
		for i, act := range acts {
			m[string(rune('a'+i))] = elicitation.Response{Action: act}
		}
		return m
	}
	for _, tt := range []struct {
		in   map[string]elicitation.Response
		want elicitation.Action
	}{
		{a(), "resumed"},
		{a(elicitation.Accept, elicitation.Accept), elicitation.Accept},
		{a(elicitation.Accept, elicitation.Decline), elicitation.Decline},
		{a(elicitation.Decline, elicitation.Cancel), elicitation.Cancel},
	} {
		if got := Summary(tt.in); got != tt.want {
			t.Errorf("Summary(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if All(a(elicitation.Accept, elicitation.Decline), elicitation.Accept) || !All(a(elicitation.Accept), elicitation.Accept) {
		t.Error("All")
	}
	if r := Responses(a(elicitation.Decline))["a"].(*mcp.ElicitResult); r.Action != "decline" {
		t.Errorf("Responses: %+v", r)
	}
}

// TestFulfillWithoutHandler: sampling without a handler is refused, roots
// are the client's, anything else is unsupported.
func TestFulfillWithoutHandler(t *testing.T) {
	ctx := context.Background()
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	if _, err := Fulfill(ctx, nil, &mcp.CreateMessageParams{}, nil, nil); err == nil || !strings.Contains(err.Error(), "no SamplingHandler") {
		t.Errorf("sampling: %v", err)
	}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	roots := []*mcp.Root{{URI: "file:///work"}}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	res, err := Fulfill(ctx, nil, &mcp.ListRootsParams{}, nil, roots)
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	if lr, ok := res.(*mcp.ListRootsResult); err != nil || !ok || len(lr.Roots) != 1 {
		t.Errorf("roots: %v %v", res, err)
	}
	if _, err := Fulfill(ctx, nil, &mcp.ElicitParams{}, nil, nil); err == nil {
		t.Error("an elicitation was fulfilled")
	}
	// No roots are an empty list, never null.
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	if res, err := Fulfill(ctx, nil, &mcp.ListRootsParams{}, nil, nil); err != nil || res.(*mcp.ListRootsResult).Roots == nil {
		t.Errorf("no roots: %v %v", res, err)
	}
	// A handler that returns no result is an error, not a null answer.
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	none := func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { return nil, nil }
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	if res, err := Fulfill(ctx, nil, &mcp.CreateMessageWithToolsParams{MaxTokens: 1}, none, nil); err == nil || res != nil {
		t.Errorf("no sampling result: %v %v", res, err)
	}
}
