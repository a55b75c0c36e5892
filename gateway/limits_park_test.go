package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMaxConcurrentCallsWithParkedCall: a handshake-era server with
// "maxConcurrentCalls": 1. A 2026-07-28 client's call that the server
// asks a question is parked (it runs on, waiting for the answer); another
// client's call then waits for its turn. The first client's answer must
// reach its parked call and both calls end: the answer is no new call,
// and must not wait behind the call that waits for it.
func TestMaxConcurrentCallsWithParkedCall(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Legacy}))
	for _, extra := range []string{`, "maxConcurrentCalls": 1`, ""} {
		t.Run(strings.TrimPrefix(extra, ", "), func(t *testing.T) {
			cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"up": {"url": %q %s}}}`, up.URL, extra)))
			if err != nil {
				t.Fatal(err)
			}
			opts := &Options{ParkTimeout: time.Minute}
			if extra == "" {
				opts.MaxCallsPerServer = 1
			}
			g, url := startGateway(t, FromConfig(cfg), opts)
			asker := connect(t, url, v0728, &mcp.ClientOptions{
				MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
				ElicitationHandler: func(_ context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
			})
			other := connect(t, url, v1125, nil)
			ctx := testCtx(t, 20*time.Second)
			first, err := asker.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "friday"}})
			if err != nil || !first.NeedsInput() {
				t.Fatalf("the first round: %v %+v", err, first)
			}
			echoed := make(chan error, 1)
			go func() {
				res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "waiting"}})
				if err == nil && texts(res) != "waiting" {
					err = fmt.Errorf("result %q", texts(res))
				}
				echoed <- err
			}()
			// The parked call holds the server's one slot; the other call
			// is in flight at the gateway, waiting for it.
			waitUntil(t, "the other call in flight", func() bool { return g.inflightCount() == 2 })
			time.Sleep(100 * time.Millisecond) // (on its way into the lane)
			answers := mcp.InputResponseMap{}
			for id := range first.InputRequests {
				answers[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 3}}
			}
			got, err := asker.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "friday"}, RequestState: first.RequestState, InputResponses: answers})
			if err != nil || !strings.HasPrefix(texts(got), "Booked 3 guests") {
				t.Fatalf("the answer to the parked call: %v %q", err, texts(got))
			}
			if err := <-echoed; err != nil {
				t.Fatalf("the other client's call: %v", err)
			}
		})
	}
}
