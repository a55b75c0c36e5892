package gateway

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionQuestionOutlivesOtherCall: a handshake-era client session
// with two calls in flight to a handshake-era server, one of which asks a
// question. The server's question does not say which call it is for, so
// the gateway sends it over either call's request; when the other call
// ends before the client answers, the question still gets its answer and
// the call that asked completes.
func TestSessionQuestionOutlivesOtherCall(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	_, url := startGateway(t, []Server{{Name: "old", Target: up.URL}}, nil)
	for round := range 6 {
		ctx := testCtx(t, 30*time.Second)
		asked := make(chan struct{}, 1)
		release := make(chan struct{})
		cs := connect(t, url, v1125, &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- struct{}{}
				select {
				case <-release: // the other call has ended
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 2}}, nil
			},
		})
		var wg sync.WaitGroup
		var bookErr, slowErr error
		var booked *mcp.CallToolResult
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, slowErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 400}})
		}()
		time.Sleep(50 * time.Millisecond) // the slow call is in flight first
		go func() {
			defer wg.Done()
			booked, bookErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "mon"}})
		}()
		select {
		case <-asked:
		case <-ctx.Done():
			t.Fatalf("round %d: the question never came", round)
		}
		// The slow call ends while the question waits for its answer.
		time.Sleep(600 * time.Millisecond)
		close(release)
		wg.Wait()
		if slowErr != nil {
			t.Fatalf("round %d: slow: %v", round, slowErr)
		}
		if bookErr != nil || booked.IsError {
			t.Fatalf("round %d: book: %v %s", round, bookErr, texts(booked))
		}
		_ = cs.Close()
	}
}
