package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nopTelemetry is a ServerTelemetry that records nothing: what it costs
// is the gateway's side of the hook.
type nopTelemetry struct{}

func (nopTelemetry) StartServerOperation(ctx context.Context, _ mcpadapter.ServerOperation) (context.Context, func(mcpadapter.ServerOperationResult)) {
	return ctx, func(mcpadapter.ServerOperationResult) {}
}

func (nopTelemetry) InjectMeta(context.Context, map[string]any) {}

// BenchmarkTelemetryHook measures the gateway's handling of one tools/call
// request up to the forwarding (its middleware, with a handler that
// answers at once), without Options.Telemetry ("unset") and with a hook
// that records nothing ("set"): the difference is what the hook costs the
// gateway per request, the implementation's own work aside.
func BenchmarkTelemetryHook(b *testing.B) {
	for _, tt := range []struct {
		name string
		tel  mcpadapter.ServerTelemetry
	}{{"unset", nil}, {"set", nopTelemetry{}}} {
		b.Run(tt.name, func(b *testing.B) {
			g, url := startGateway(b, []Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &Options{Telemetry: tt.tel})
			// A real request of a client's session, caught on its way in.
			var req mcp.Request
			g.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, r mcp.Request) (mcp.Result, error) {
					if method == "tools/call" {
						req = r
					}
					return next(ctx, method, r)
				}
			})
			cs := connect(b, url, v1125, nil)
			if _, err := cs.CallTool(testCtx(b, time.Minute), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"},
				Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}); err != nil || req == nil {
				b.Fatalf("echo: %v (request caught: %v)", err, req != nil)
			}
			h := g.middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
				return &mcp.CallToolResult{}, nil
			})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := h(ctx, "tools/call", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
