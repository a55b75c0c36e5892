package mcpadapter

import (
	"context"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/engine"
)

// TestTelemetryUnsetCostsNothing: with no ClientOptions.Telemetry,
// starting and ending an operation allocates nothing.
func TestTelemetryUnsetCostsNothing(t *testing.T) {
	c := &Client{ep: &engine.Endpoint{Kind: engine.InProcess}}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		octx, end := c.startOp(ctx, "tools/call", "echo")
		if octx != ctx {
			t.Fatal("the context changed")
		}
		end(OperationResult{})
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per operation with no Telemetry; want 0", allocs)
	}
}
