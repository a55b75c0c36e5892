package mcpadapter_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSearchCatalogsPerPrincipalBounded: an Adapter with tool search keeps
// a catalog for each principal, up to DefaultMaxSessions of them. Searches
// that alternate between principals list the server once per principal
// (no principal's search forgets another's catalog), and one principal
// more than the bound forgets the one that searched least recently, which
// then lists again.
func TestSearchCatalogsPerPrincipalBounded(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "kb", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "Look up an article in the knowledge base."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	var lists atomic.Int64
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	a, err := mcpadapter.New(srv, &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1, MaxAge: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx := testCtx(t)
	search := func(p string) {
		t.Helper()
		hits, err := a.Search(as(ctx, p), "knowledge base article", 5)
		if err != nil || len(hits) != 1 {
			t.Fatalf("%s: %v %v", p, hits, err)
		}
	}
	principal := func(i int) string { return fmt.Sprintf("user-%d", i) }
	n := mcpadapter.DefaultMaxSessions
	for i := range n {
		search(principal(i))
	}
	if got := lists.Load(); got != int64(n) {
		t.Fatalf("%d principals' first searches listed %d times, want %d", n, got, n)
	}
	for i := range n {
		search(principal(i)) // user-0 is now the least recent again
	}
	if got := lists.Load(); got != int64(n) {
		t.Fatalf("the principals' second searches listed %d times more: a principal's search forgot another's catalog", got-int64(n))
	}
	search("one-more") // forgets user-0's catalog, the least recent
	search(principal(n - 1))
	if got := lists.Load(); got != int64(n)+1 {
		t.Fatalf("one principal over the bound: %d listings, want %d", got, n+1)
	}
	search(principal(0))
	if got := lists.Load(); got != int64(n)+2 {
		t.Fatalf("the least recent principal's catalog was kept past the bound: %d listings, want %d", got, n+2)
	}
}
