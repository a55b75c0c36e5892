package mcpadapter_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// httpCells are the streamable HTTP set-ups the fast path serves: the
// 2025-11-25 era with event-stream and JSON answers, and stateless
// 2026-07-28; as the mcptestserver's flags.
func httpCells() []struct {
	name string
	args []string
} {
	return []struct {
		name string
		args []string
	}{
		{"2025-11-25-sse", []string{"-era", "legacy"}},
		{"2025-11-25-json", []string{"-era", "legacy", "-json-response"}},
		{"2026-07-28", []string{"-era", "modern", "-stateless"}},
	}
}

// A plain tool call over streamable HTTP allocates a few KB on the fast
// path, not the 150–240 KB of go-sdk's (bench/cmd/callcost measures it;
// this test allows 16 KiB, 40 KiB under the race detector). It also
// proves the fast path is taken, in every cell.
func TestHTTPFastPathAllocatesLittle(t *testing.T) {
	if !mcpadapter.FastPathBuilt {
		t.Skip("built with -tags mcpadapter_nofastpath: every call takes go-sdk's path by design")
	}
	for _, cell := range httpCells() {
		t.Run(cell.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p := testserver.StartProcess(t, append([]string{"-transport", "http", "-minimal"}, cell.args...)...)
			url := p.URL
			per := func(disable bool) uint64 {
				c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{DisableFastPath: disable})
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
				for range 20 {
					call()
				}
				const n = 200
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for range n {
					call()
				}
				runtime.ReadMemStats(&after)
				return (after.TotalAlloc - before.TotalAlloc) / n
			}
			fast, sdk := per(false), per(true)
			t.Logf("%s: %d bytes allocated per call on the fast path, %d on go-sdk's", cell.name, fast, sdk)
			bound := uint64(16 << 10)
			if raceDetector {
				bound = 40 << 10 // the race detector's own
			}
			if fast > bound {
				t.Errorf("the fast path allocated %d bytes per call, want at most %d (go-sdk's path: %d)", fast, bound, sdk)
			}
		})
	}
}

// A plain tool call over stdio allocates a few KB, not the ~70 KB of
// go-sdk's path (bench/cmd/callcost measures it; the fast path allocates
// 1.3 KB and 2.1 KB, 1.5 KB and 2.3 KB under -race; this test allows
// 3 KiB). It also proves the fast path is taken, in both eras.
func TestFastPathAllocatesLittle(t *testing.T) {
	if !mcpadapter.FastPathBuilt {
		t.Skip("built with -tags mcpadapter_nofastpath: every call takes go-sdk's path by design")
	}
	for _, era := range []string{testserver.Legacy.String(), testserver.Modern.String()} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", era, "-minimal"}}, nil)
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
