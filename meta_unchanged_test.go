package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallMetaNotModified: the _meta a caller gives a call
// (CallOptions.Meta) is the caller's: go-sdk adds its own entries to the
// _meta of a request it sends to a 2026-07-28 server, and those never
// land in the caller's map, so that one map shared by concurrent calls
// (of several users of one Client, or of one program's goroutines) is
// read only, and what the server received is the caller's entries and
// go-sdk's.
func TestCallMetaNotModified(t *testing.T) {
	t.Parallel()
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hostileServer(era)
			var mu sync.Mutex
			var got []mcp.Meta
			mcp.AddTool(srv, &mcp.Tool{Name: "meta"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				mu.Lock()
				got = append(got, maps.Clone(req.Params.Meta))
				mu.Unlock()
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
			})
			c, err := mcpadapter.NewClient(srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			meta := map[string]any{"example.com/trace": "t-1"}
			opts := &mcpadapter.CallOptions{Meta: meta}
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 4 {
				wg.Go(func() {
					if _, err := c.CallTool(ctx, "meta", json.RawMessage(`{}`), opts); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if len(meta) != 1 || meta["example.com/trace"] != "t-1" {
				t.Errorf("the caller's _meta was changed: %v", meta)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 4 {
				t.Fatalf("the server saw %d calls", len(got))
			}
			for _, m := range got {
				if m["example.com/trace"] != "t-1" {
					t.Errorf("the server got _meta %v, without the caller's entry", fmt.Sprint(m))
				}
			}
		})
	}
}
