package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// waitVersion waits, at most 10 seconds, for a.ToolsVersion to pass v.
func waitVersion(t *testing.T, a *mcpadapter.Adapter, v uint64) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.ToolsVersion() == v {
		if time.Now().After(deadline) {
			t.Fatalf("ToolsVersion stayed %d for 10s: no tool-list change reached the adapter", v)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return a.ToolsVersion()
}

func toolNamed(tools []*mcpadapter.Tool, name string) *mcpadapter.Tool {
	i := slices.IndexFunc(tools, func(t *mcpadapter.Tool) bool { return t.Name == name })
	if i < 0 {
		return nil
	}
	return tools[i]
}

func callText(t *testing.T, ctx context.Context, tl *mcpadapter.Tool, args string) *mcpadapter.Result {
	t.Helper()
	res, err := tl.Call(ctx, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", tl.Name, err)
	}
	return res
}

// TestLiveToolLists: a server adds and removes tools while the adapter's
// tools are in use, in both eras (handshake: notifications/tools/list_changed;
// 2026-07-28: subscriptions/listen), in-process and over streamable HTTP.
// The adapter sees each change (ToolsVersion), its next Tools lists the new
// tools, and a removed tool still called gets a result that says so.
func TestLiveToolLists(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Modern, testserver.Legacy} {
		for _, transport := range []string{"in-process", "http"} {
			t.Run(fmt.Sprintf("%v/%s", era, transport), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				before := runtime.NumGoroutine()
				srv := testserver.New(testserver.Options{Era: era, Mutable: true})
				var target any = srv
				if transport == "http" {
					target = testserver.ServeStreamable(t, srv)
				}
				a, err := mcpadapter.New(target, &mcpadapter.Options{WatchTools: true})
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					// The subscription stream ends with the connection.
					a.Close()
					if transport == "in-process" {
						testenv.WaitGoroutines(t, before)
					}
				}()
				tools, err := a.Tools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				v := a.ToolsVersion()
				callText(t, ctx, toolNamed(tools, "tool_add"), `{"name":"fresh","description":"A tool added mid-run."}`)
				v = waitVersion(t, a, v)
				tools, err = a.Tools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				fresh := toolNamed(tools, "fresh")
				if fresh == nil {
					t.Fatalf("after tool_add, Tools has no \"fresh\"")
				}
				if res := callText(t, ctx, fresh, `{"x":1}`); res.IsError || res.Text() != `fresh: {"x":1}` {
					t.Fatalf("fresh: %+v %q", res.IsError, res.Text())
				}
				callText(t, ctx, toolNamed(tools, "tool_remove"), `{"name":"fresh"}`)
				waitVersion(t, a, v)
				res := callText(t, ctx, fresh, `{}`)
				if !res.IsError || !strings.HasPrefix(res.Text(), fmt.Sprintf("Tool \"fresh\" was removed by server %q; its tools now are: ", fresh.Server)) || !strings.Contains(res.Text(), "echo") {
					t.Fatalf("calling the removed tool: IsError %v, %q", res.IsError, res.Text())
				}
				if tools, _ = a.Tools(ctx); toolNamed(tools, "fresh") != nil {
					t.Fatalf("after tool_remove, Tools still has \"fresh\"")
				}
			})
		}
	}
}

// TestRemovedToolUnwatched: without WatchTools, a removed tool the model
// still calls gets the same clear result, from the server's refusal.
func TestRemovedToolUnwatched(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := mcpadapter.New(testserver.New(testserver.Options{Mutable: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	callText(t, ctx, toolNamed(tools, "tool_remove"), `{"name":"echo"}`)
	res := callText(t, ctx, toolNamed(tools, "echo"), `{"text":"hi"}`)
	if !res.IsError || !strings.HasPrefix(res.Text(), `Tool "echo" was removed by server "in-process"; its tools now are: add, `) {
		t.Fatalf("calling the removed tool: IsError %v, %q", res.IsError, res.Text())
	}
	if a.ToolsVersion() != 0 {
		t.Fatalf("ToolsVersion %d without WatchTools, want 0", a.ToolsVersion())
	}
	// A tool that fails for its own reasons keeps its own error.
	res = callText(t, ctx, toolNamed(tools, "fail"), `{"message":"boom"}`)
	if !res.IsError || strings.Contains(res.Text(), "removed") {
		t.Fatalf("fail: %q", res.Text())
	}
}

// TestRemovedToolEverything: server-everything (the TypeScript SDK), asked
// for a tool it does not list, refuses in its own words; the model gets
// the removed-tool result naming its real tools.
func TestRemovedToolEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path, args, env := testenv.EverythingStdio(t)
	a, err := mcpadapter.New(mcpadapter.Command{Path: path, Args: args, Env: env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gone := *toolNamed(tools, "echo") // as if listed before the server dropped it
	gone.Name, gone.OriginalName = "retired", "retired"
	res := callText(t, ctx, &gone, `{"message":"hi"}`)
	if !res.IsError || !strings.HasPrefix(res.Text(), `Tool "retired" was removed by server "`) || !strings.Contains(res.Text(), "get-sum") {
		t.Fatalf("calling a tool server-everything does not have: IsError %v, %q", res.IsError, res.Text())
	}
}
