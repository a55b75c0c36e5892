//go:build !mcpadapter_nofastpath

package mcpadapter_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bodyID is the id member of a request's body.
var bodyID = regexp.MustCompile(`^\{"jsonrpc":"2.0","id":[0-9]+,`)

// TestHTTPFastPathMetaSameAsSDK: a call with a _meta of its own (a
// relayed client's, crafted: go-sdk's own keys, HTML text, nesting) takes
// the fast path over streamable HTTP and sends the same POST as go-sdk's
// path, headers and body bytes (the id aside), in both eras; one that
// names another protocol version than the connection's is left to
// go-sdk, which sends that version's headers.
func TestHTTPFastPathMetaSameAsSDK(t *testing.T) {
	t.Parallel()
	metas := []map[string]any{
		{"example.com/trace": "t-1"},
		{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}, "a<b>&": "\u2028"},
		{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientInfo: map[string]any{"name": "relayed", "version": "1"}, "deep": map[string]any{"x": []any{1.5, nil, true}}},
		{mcp.MetaKeyProtocolVersion: "1999-01-01"},
		{mcp.MetaKeyProtocolVersion: nil, "n": 12345678901234567890.0},
	}
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			p := newHTTPDiffPair(t, era, false)
			version := testserver.LegacyVersion
			if era == testserver.Modern {
				version = testserver.ModernVersion
			}
			script := testserver.HTTPScript{Body: `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"ok"}]}}`}
			for _, meta := range metas {
				one := func(c *mcpadapter.Client) (shape, body string, paths engine.Paths) {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					before, n := mcpadapter.CallPaths(c), len(p.peer.Calls())
					res, err := c.CallTool(ctx, testserver.ScriptedTool, testserver.HTTPScriptArgs(script), &mcpadapter.CallOptions{Meta: meta})
					if err != nil || res.Text() != "ok" {
						t.Fatalf("_meta %v: %v %+v", meta, err, res)
					}
					calls := p.peer.Calls()[n:]
					if len(calls) != 1 {
						t.Fatalf("_meta %v: %d POSTs", meta, len(calls))
					}
					return requestShape(calls[0]), bodyID.ReplaceAllString(string(calls[0].Body), `{"jsonrpc":"2.0","id":ID,`), mcpadapter.CallPaths(c).Sub(before)
				}
				fs, fb, fp := one(p.fast)
				ss, sb, sp := one(p.sdk)
				// go-sdk sends the headers of the protocol version a
				// call's _meta names: the fast path leaves a call naming
				// another version than the connection's to it.
				want := engine.PathFast
				if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); v != "" && v != version {
					want = engine.PathSDK
				}
				if fp[want] != 1 || sp[engine.PathSDK] != 1 {
					t.Errorf("_meta %v: paths fast %v, sdk %v", meta, fp, sp)
				}
				if fs != ss {
					t.Errorf("_meta %v: requests differ:\n%s", meta, lineDiff(fs, ss))
				}
				if fb != sb {
					t.Errorf("_meta %v: bodies differ:\nfast %s\nsdk  %s", meta, fb, sb)
				}
			}
		})
	}
}
