package mcpadapter_test

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server whose cursor never ends, 1,000 tools a page: the listing stops
// at DefaultMaxListItems with a *ListLimitError naming the server, instead
// of reading 1,000 pages (a million tools: 34–87 s and 1.65 GiB before).
// Under the race detector the 51 pages take longer than the test's 30 s
// on a busy 2-core machine, so a -race run sets MaxListItems to 5,000
// unless MCPADAPTER_SOAK_SECONDS asks for the long settings.
func TestHostileEndlessListing(t *testing.T) {
	ctx := testCtx(t)
	before := runtime.NumGoroutine()
	opts := &mcpadapter.ClientOptions{Name: "endless", Logger: quietLogger()}
	limit, pages := mcpadapter.DefaultMaxListItems, 51
	if raceEnabled() && os.Getenv("MCPADAPTER_SOAK_SECONDS") == "" {
		opts.MaxListItems, limit, pages = 5000, 5000, 6
	}
	c, err := mcpadapter.NewClient(testserver.NewEndlessList(testserver.EndlessList{PageSize: 1000}), opts)
	if err != nil {
		t.Fatal(err)
	}
	m := watchMemory()
	start := time.Now()
	_, err = c.Tools(ctx)
	d := time.Since(start)
	mem := m.end()
	var le *mcpadapter.ListLimitError
	if !errors.As(err, &le) || le.Bound != "MaxListItems" || le.Server != "endless" || le.Method != "tools/list" ||
		le.Limit != int64(limit) || le.Items <= limit || le.Pages != pages {
		t.Fatalf("got %#v (%v), want a *ListLimitError for MaxListItems after %d pages", le, err, pages)
	}
	t.Logf("HOSTILE endless-list page=1000 pages=%d items=%d bytes=%d took=%v %s", le.Pages, le.Items, le.Bytes, d.Round(time.Millisecond), mem)
	t.Logf("caller sees: %v", err)
	if mem.peakGrow > 400*mib {
		t.Errorf("memory: %s", mem)
	}
	c.Close()
	testenv.WaitGoroutines(t, before)
}

// Pages of big tools (40 tools of 10 kB, 400 kB a page) stop at
// MaxListBytes.
func TestHostileListingTooManyBytes(t *testing.T) {
	ctx := testCtx(t)
	wordy := testserver.EndlessList{PageSize: 40, DescriptionBytes: 10_000}
	c, err := mcpadapter.NewClient(testserver.NewEndlessList(wordy),
		&mcpadapter.ClientOptions{Name: "wordy", MaxListBytes: mib, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Tools(ctx)
	var le *mcpadapter.ListLimitError
	if !errors.As(err, &le) || le.Bound != "MaxListBytes" || le.Limit != mib || le.Bytes <= mib || le.Pages != 3 {
		t.Fatalf("got %#v (%v), want a *ListLimitError for MaxListBytes after 3 pages of 400 kB", le, err)
	}
	t.Logf("caller sees: %v", err)
	// A negative bound turns it off: here the items bound then stops it.
	c2, _ := mcpadapter.NewClient(testserver.NewEndlessList(wordy),
		&mcpadapter.ClientOptions{Name: "wordy", MaxListBytes: -1, MaxListItems: 100, Logger: quietLogger()})
	defer c2.Close()
	if _, err := c2.Tools(ctx); !errors.As(err, &le) || le.Bound != "MaxListItems" || le.Pages != 3 {
		t.Fatalf("got %v, want the items bound after 3 pages", err)
	}
}

// Cursors that repeat, not in a row (page 3 hands out page 1's cursor):
// found at once. Before, only a cursor repeated by the very next page was
// noticed, and this listing ran to the 1,000-page bound.
func TestHostileListingCursorCycle(t *testing.T) {
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(testserver.NewEndlessList(testserver.EndlessList{PageSize: 10, Cycle: 3}),
		&mcpadapter.ClientOptions{Name: "loop", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Tools(ctx)
	var le *mcpadapter.ListLimitError
	if !errors.As(err, &le) || le.Bound != "cursor" || le.Pages != 3 || le.Limit != 1 {
		t.Fatalf("got %v, want a *ListLimitError: page 3 repeats page 1's cursor", err)
	}
	t.Logf("HOSTILE cursor-cycle took=%v: %v", time.Since(start).Round(time.Millisecond), err)

	// In a group with SkipUnavailable, the looping server is left out and
	// the others' tools are listed.
	ok, _ := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Name: "ok"})
	g, err := mcpadapter.GroupOf(c, ok)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	a, _ := mcpadapter.New(g, &mcpadapter.Options{SkipUnavailable: true, OnUnavailable: func(f mcpadapter.ServerFailure) { left = append(left, f.Server) }})
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil || len(tools) == 0 || len(left) != 1 || left[0] != "loop" {
		t.Fatalf("tools %d, %v; left out %v", len(tools), err, left)
	}
}

// Two non-ASCII names of the same byte length (天気 and 予報) must not
// sanitise to the same "______" and collide, denying every tool of the
// server: each gets a hash of its own name, and both can be called.
func TestHostileNonASCIIToolNames(t *testing.T) {
	ctx := testCtx(t)
	srv := testserver.NewListed("weather", &mcp.Tool{Name: "天気"}, &mcp.Tool{Name: "予報"}, &mcp.Tool{Name: "get.forecast"}, &mcp.Tool{Name: "get_forecast"})
	a, err := mcpadapter.New(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	names := map[string]string{}
	for _, tl := range tools {
		names[tl.OriginalName] = tl.Name
		if res, err := tl.Call(ctx, nil); err != nil || res.Text() != testserver.CalledText(tl.OriginalName) {
			t.Errorf("calling %q (%q): %v %v", tl.Name, tl.OriginalName, err, res)
		}
	}
	t.Logf("names: %v", names)
	if len(names) != 4 || names["天気"] == names["予報"] || names["get.forecast"] == names["get_forecast"] ||
		names["get_forecast"] != "get_forecast" || !strings.HasPrefix(names["天気"], "______") {
		t.Errorf("names %v, want four distinct names, the valid one unchanged", names)
	}
}

// A server that lists a name twice fails on its own: with
// SkipUnavailable the other servers' tools are listed, and without it the
// error names the server (not a *NameCollisionError for the whole
// group).
func TestHostileDuplicateToolNameInOneServer(t *testing.T) {
	ctx := testCtx(t)
	dup, _ := mcpadapter.NewClient(testserver.NewListed("dup", &mcp.Tool{Name: "echo"}, &mcp.Tool{Name: "echo", Description: "again"}),
		&mcpadapter.ClientOptions{Name: "dup"})
	ok, _ := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Name: "ok"})
	g, err := mcpadapter.GroupOf(dup, ok)
	if err != nil {
		t.Fatal(err)
	}
	var left []mcpadapter.ServerFailure
	a, _ := mcpadapter.New(g, &mcpadapter.Options{SkipUnavailable: true, OnUnavailable: func(f mcpadapter.ServerFailure) { left = append(left, f) }})
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatalf("with SkipUnavailable: %v", err)
	}
	for _, tl := range tools {
		if tl.Server != "ok" {
			t.Errorf("a tool of %s listed: %s", tl.Server, tl.Name)
		}
	}
	var ce *mcpadapter.NameCollisionError
	if len(tools) == 0 || len(left) != 1 || left[0].Server != "dup" || !errors.As(left[0].Err, &ce) || ce.Name != "dup_echo" {
		t.Fatalf("tools %d, left out %v; want the ok server's tools and dup left out with a collision", len(tools), left)
	}
	t.Logf("left out: %v", left[0].Err)

	// Without SkipUnavailable: a GroupError naming dup alone.
	a2, _ := mcpadapter.New(g, nil)
	_, err = a2.Tools(ctx)
	var ge *mcpadapter.GroupError
	if !errors.As(err, &ge) || len(ge.Failures) != 1 || ge.Failures[0].Server != "dup" || !errors.As(err, &ce) {
		t.Fatalf("got %v, want a GroupError naming dup's collision", err)
	}
	// Filtering one of the two out resolves it.
	a3, _ := mcpadapter.New(g, &mcpadapter.Options{ToolFilter: func(_ string, tl *mcpadapter.Tool) bool { return tl.Description != "again" }})
	all, err := a3.Tools(ctx)
	if err != nil || len(all) != len(tools)+1 {
		t.Fatalf("filtered: %d tools, %v; want %d", len(all), err, len(tools)+1)
	}
}
