package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelayCallIdentityMetaWins: the relayed client's _meta cannot
// override the entries of the call's CallIdentity (the program's word on
// whom the call is for), over stdio's fast path and over HTTP, in both
// eras; its other entries still reach the server.
func TestRelayCallIdentityMetaWins(t *testing.T) {
	t.Parallel()
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			targets := map[string]any{
				"stdio": stdioServer(t, "-era", era.String()),
				"http":  testserver.ServeStreamable(t, testserver.New(testserver.Options{Era: era})),
			}
			for name, target := range targets {
				t.Run(name, func(t *testing.T) {
					ctx := testCtx(t)
					c, err := mcpadapter.NewClient(target, &mcpadapter.ClientOptions{Relay: true})
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					ctx = mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "alice", Meta: map[string]any{"example.com/tenant": "alice"}})
					for i := range 3 { // go-sdk's call, then the fast path's
						res, err := c.RelayCall(ctx, &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"example.com/tenant": "bob", "example.com/trace": "t-1"}}, nil)
						if err != nil {
							t.Fatal(err)
						}
						var w testserver.Whoami
						if err := json.Unmarshal([]byte(texts(res)), &w); err != nil {
							t.Fatalf("%v: %s", err, texts(res))
						}
						if w.Meta["example.com/tenant"] != "alice" || w.Meta["example.com/trace"] != "t-1" {
							t.Errorf("call %d: the server saw _meta %v, want the identity's tenant alice and the client's trace", i, w.Meta)
						}
					}
				})
			}
		})
	}
}

// TestCallMetaNotChanged: a CallOptions.Meta shared by concurrent calls
// is the caller's: no call writes into it (go-sdk's entries of a
// 2026-07-28 connection, a progress token), so calls on the fast path and
// on go-sdk's may read it at once.
func TestCallMetaNotChanged(t *testing.T) {
	t.Parallel()
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			c, err := mcpadapter.NewClient(stdioServer(t, "-era", era.String()), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			opts := &mcpadapter.CallOptions{Meta: map[string]any{"example.com/trace": "t-1"}}
			withProgress := &mcpadapter.CallOptions{Meta: opts.Meta, Progress: func(mcpadapter.Progress) {}}
			var wg sync.WaitGroup
			for i := range 8 {
				o := opts
				if i%2 == 1 {
					o = withProgress
				}
				wg.Go(func() {
					if _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"x"}`), o); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if len(opts.Meta) != 1 {
				t.Errorf("the calls changed their CallOptions.Meta: %v", opts.Meta)
			}
		})
	}
}

// TestRelayedMetaNotLearnt: the first call on a 2026-07-28 connection is
// a relayed client's that gives go-sdk's _meta entries itself, crafted.
// The fast path learns go-sdk's entries from go-sdk's calls, never the
// client's: the plain calls that follow, the fast path's included, carry
// go-sdk's client info and capabilities, not the crafted ones.
func TestRelayedMetaNotLearnt(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-era", testserver.Modern.String()), &mcpadapter.ClientOptions{Relay: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	crafted := mcp.Meta{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientInfo:         map[string]any{"name": "EVIL", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{"experimental": map[string]any{"EVIL": map[string]any{}}},
	}
	res, err := c.RelayCall(ctx, &mcp.CallToolParams{Name: "whoami", Meta: crafted}, nil)
	if err != nil || !strings.Contains(texts(res), "EVIL") {
		t.Fatalf("the relayed call: %v %s", err, texts(res))
	}
	before := mcpadapter.CallPaths(c)
	for i := range 3 {
		res, err := c.CallTool(ctx, "whoami", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Text(), "EVIL") || !strings.Contains(res.Text(), mcp.MetaKeyClientInfo) {
			t.Errorf("plain call %d carried the relayed client's entries, or none: %s", i, res.Text())
		}
	}
	if got := mcpadapter.CallPaths(c).Sub(before); mcpadapter.FastPathBuilt && got[engine.PathFast] == 0 {
		t.Errorf("no plain call took the fast path: %v", got)
	}
}

// TestRelayCallUnknownContent: a server answers a relayed call with a
// content block of a type go-sdk does not know. The call fails with a
// *ContentError on the fast path as on go-sdk's (never a result that
// silently lacks the block), in both eras.
func TestRelayCallUnknownContent(t *testing.T) {
	t.Parallel()
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			c, err := mcpadapter.NewClient(stdioServer(t, "-era", era.String()), &mcpadapter.ClientOptions{Relay: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			reply := `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"a"},{"type":"widget","x":1}]}}`
			before := mcpadapter.CallPaths(c)
			for i := range 3 { // go-sdk's call first on a 2026-07-28 connection, then the fast path's
				res, err := c.RelayCall(ctx, &mcp.CallToolParams{Name: "bad_response", Arguments: testserver.ScriptedArgs(reply)}, nil)
				if err == nil {
					t.Errorf("call %d: a result without the unknown block: %+v", i, res)
				}
			}
			if got := mcpadapter.CallPaths(c).Sub(before); mcpadapter.FastPathBuilt && got[engine.PathFast] == 0 {
				t.Errorf("no call took the fast path: %v", got)
			}
		})
	}
}

// traceTelemetry writes a trace context of its own into every request's
// _meta.
type traceTelemetry struct{}

func (traceTelemetry) StartOperation(ctx context.Context, _ mcpadapter.Operation) (context.Context, func(mcpadapter.OperationResult)) {
	return ctx, func(mcpadapter.OperationResult) {}
}

func (traceTelemetry) InjectMeta(_ context.Context, meta map[string]any) {
	meta["traceparent"] = "00-OURS-01"
}

// TestRelayCallTraceAndIdentityChecked: a relayed call carries the
// Telemetry's trace context over a relayed client's "traceparent", and a
// CallIdentity the adapter refuses (a header it owns) fails the call even
// over stdio, where headers are not sent, as CallTool does.
func TestRelayCallTraceAndIdentityChecked(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-era", testserver.Legacy.String()), &mcpadapter.ClientOptions{Relay: true, Telemetry: traceTelemetry{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.RelayCall(ctx, &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"traceparent": "00-THEIRS-01", "example.com/x": "y"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var w testserver.Whoami
	if err := json.Unmarshal([]byte(texts(res)), &w); err != nil {
		t.Fatalf("%v: %s", err, texts(res))
	}
	if w.Meta["traceparent"] != "00-OURS-01" || w.Meta["example.com/x"] != "y" {
		t.Errorf("the server saw _meta %v, want the Telemetry's traceparent and the client's other entry", w.Meta)
	}
	bad := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "p", Headers: map[string]string{"Authorization": "Bearer x"}})
	var ie *mcpadapter.IdentityError
	if _, err := c.RelayCall(bad, &mcp.CallToolParams{Name: "whoami"}, nil); !errors.As(err, &ie) {
		t.Errorf("a refused identity: %v, want an *IdentityError", err)
	}
}
