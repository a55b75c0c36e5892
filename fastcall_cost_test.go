package mcpadapter

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// A plain tool call over stdio allocates a few KB, not the ~70 KB of
// go-sdk's path (issue 19: the goal is 4 KB, which bench/cmd/callcost
// measures; the fast path allocates 1.3 KB and 2.1 KB, 1.5 KB and 2.3 KB
// under -race; this test allows 3 KiB, below the goal and the 4 KB a
// 2026-07-28 call took before session 5). It also proves the fast path is
// taken, in both eras.
func TestFastPathAllocatesLittle(t *testing.T) {
	if !engine.FastPathBuilt {
		t.Skip("built with -tags mcpadapter_nofastpath: every call takes go-sdk's path by design")
	}
	for _, era := range []string{testserver.Legacy.String(), testserver.Modern.String()} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := NewClient(Command{Path: testserver.Build(t), Args: []string{"-era", era, "-minimal"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			args := json.RawMessage(`{"text":"hello"}`)
			call := func() {
				res, err := c.CallTool(ctx, "echo", args, nil)
				if err != nil || res.Text() != "hello" {
					t.Fatalf("echo: %v %+v", err, res)
				}
			}
			for range 50 {
				call()
			}
			const n = 300
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range n {
				call()
			}
			runtime.ReadMemStats(&after)
			perCall := (after.TotalAlloc - before.TotalAlloc) / n
			t.Logf("%s: %d bytes allocated per call", era, perCall)
			if perCall > 3<<10 {
				t.Errorf("%d bytes allocated per call, want at most 3 KiB (go-sdk's path: about 70 KB)", perCall)
			}
		})
	}
}
