//go:build !mcpadapter_nofastpath

package mcpadapter_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFastPathMetaSameAsSDK: a call with a _meta of its own takes the
// fast path over stdio and sends the same request as go-sdk's path, in
// both eras: on a 2026-07-28 connection its entries over those go-sdk
// adds, also when it gives one of those itself (a relayed client's
// capabilities), which go-sdk keeps.
func TestFastPathMetaSameAsSDK(t *testing.T) {
	t.Parallel()
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			p := newDiffPair(t, era.String())
			reply := `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"ok"}]}}`
			for _, meta := range []map[string]any{
				{"example.com/trace": "t-1", "n": 2.5},
				{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}, "example.com/trace": "t-2"},
				// A relayed client's crafted entries: go-sdk's own keys
				// (kept as given, by both paths), HTML and non-ASCII
				// text, null, nesting, numbers past float64's integers.
				{mcp.MetaKeyProtocolVersion: "1999-01-01", mcp.MetaKeyClientInfo: map[string]any{"name": "<evil>&", "version": "\u2028"}},
				{mcp.MetaKeyProtocolVersion: nil, mcp.MetaKeyClientInfo: nil, mcp.MetaKeyClientCapabilities: nil},
				{"a<b>&c": "\u2028\u2029é\x00", "null": nil, "deep": map[string]any{"x": []any{map[string]any{"y": []any{1.0, "z", true, nil}}}}, "big": 12345678901234567890.0, "tiny": 1e-300},
				{"": "empty key", "io.modelcontextprotocol/other": []any{}},
			} {
				one := func(c *mcpadapter.Client, ids *callIDTrace) outcome {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					before := mcpadapter.CallPaths(c)
					res, err := c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(reply), &mcpadapter.CallOptions{Meta: meta})
					o := outcome{res: res, id: ids.last(), request: ids.sent(), paths: mcpadapter.CallPaths(c).Sub(before)}
					if err != nil {
						o.err = err.Error()
					}
					return o
				}
				var sdk outcome
				var wg sync.WaitGroup
				wg.Go(func() { sdk = one(p.sdk, p.sdkIDs) })
				fast := one(p.fast, p.fastIDs)
				wg.Wait()
				if d := compareOutcomes(fast, sdk); d != "" {
					t.Errorf("_meta %v:\n%s", meta, d)
				}
			}
		})
	}
}
