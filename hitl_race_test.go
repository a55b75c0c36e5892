package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHITLQuestionThenAnswerAtOnce: a handshake-era server asks the user
// a question and answers the call in the same breath, without waiting
// for the answer (the order is placed). Whichever the client sees first,
// the user never loses what the server answered: the call returns it, or
// the resume of the question does (or says the call completed), and
// nothing invites a second call that would place a second order.
func TestHITLQuestionThenAnswerAtOnce(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hostileServer(testserver.Legacy)
	var placed atomic.Int32
	questionEnded := make(chan struct{}, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "order"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		var schema map[string]any
		_ = json.Unmarshal([]byte(approveForm), &schema)
		asked := make(chan struct{})
		go func() {
			close(asked)
			_, _ = req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "Place the order?", RequestedSchema: schema})
			questionEnded <- struct{}{}
		}()
		<-asked
		n := placed.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "order placed " + string(rune('0'+n%10))}}}, nil, nil
	})
	order := hitlTools(t, srv, nil)["order"]
	interrupted := 0
	for i := range 30 {
		if i > 0 {
			// The last call's question has ended: this call's lane is its own.
			select {
			case <-questionEnded:
			case <-ctx.Done():
				t.Fatalf("call %d: the server's question never ended", i-1)
			}
		}
		before := placed.Load()
		res, err := order.Call(ctx, json.RawMessage(`{}`))
		var ir *mcpadapter.InputRequiredError
		if !errors.As(err, &ir) {
			if err != nil || !strings.HasPrefix(res.Text(), "order placed") {
				t.Fatalf("call %d: %v %+v", i, err, res)
			}
			continue
		}
		interrupted++
		p := ir.Pending
		res, err = order.Resume(ctx, p, answer(p.Requests[0].Key, elicitation.Accept, map[string]any{"ok": true}))
		var ae *mcpadapter.AnsweredError
		switch {
		case err == nil && strings.HasPrefix(res.Text(), "order placed") && !res.IsError:
		case errors.As(err, &ae) && ae.Now == "completed":
		default:
			t.Fatalf("call %d: the server placed the order (%d orders), the resume returns %v %q", i, placed.Load()-before, err, res.Text())
		}
	}
	t.Logf("%d of 30 calls were interrupted", interrupted)
	if placed.Load() != 30 {
		t.Errorf("orders placed: %d", placed.Load())
	}
}
