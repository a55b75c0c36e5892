package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelayCallFastPath: a relayed call with nothing but a name and
// arguments takes the fast path over stdio, even with a ProgressHandler
// and a progress token of the other client's in its params (which is not
// sent); one whose caller wants its progress gets the notifications
// under a token of the client's own, through go-sdk.
func TestRelayCallFastPath(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var all atomic.Int64
	c, err := mcpadapter.NewClient(stdioServer(t, "-era", testserver.Legacy.String()), &mcpadapter.ClientOptions{
		Relay:           true,
		ProgressHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { all.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Connected, so that the first call is not go-sdk's to learn from.
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"relayed"}`)}
	params.SetProgressToken("the-other-clients")
	before := mcpadapter.CallPaths(c)
	res, err := c.RelayCall(ctx, params, nil)
	if err != nil || texts(res) != "relayed" {
		t.Fatalf("echo: %v %q", err, texts(res))
	}
	if params.GetProgressToken() != "the-other-clients" || string(params.Arguments.(json.RawMessage)) != `{"text":"relayed"}` {
		t.Errorf("RelayCall changed its params: %+v", params)
	}
	if got := mcpadapter.CallPaths(c).Sub(before); mcpadapter.FastPathBuilt && got[engine.PathFast] != 1 {
		t.Errorf("the plain relayed call did not take the fast path: %v", got)
	}

	var seen []mcpadapter.Progress
	params = &mcp.CallToolParams{Name: "progress", Arguments: json.RawMessage(`{"steps":3}`)}
	params.SetProgressToken("the-other-clients")
	res, err = c.RelayCall(ctx, params, &mcpadapter.CallOptions{Progress: func(p mcpadapter.Progress) { seen = append(seen, p) }})
	if err != nil || texts(res) != "done" {
		t.Fatalf("progress: %v %q", err, texts(res))
	}
	if len(seen) != 3 || seen[2].Progress != 3 || seen[2].Total != 3 || seen[2].Message != "step 3" {
		t.Errorf("progress seen: %+v", seen)
	}
	if all.Load() != 3 {
		t.Errorf("ProgressHandler saw %d notifications, want 3", all.Load())
	}
}

// texts joins the text blocks of res.
func texts(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestRelayCallRounds: a relayed call's _meta reaches the server, and a
// 2026-07-28 server's input_required comes back as sent; the retry with
// the answers (InputResponses, RequestState) completes the call.
func TestRelayCallRounds(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Relay: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := mcp.Meta{"example.com/trace": "t-1"}
	res, err := c.RelayCall(ctx, &mcp.CallToolParams{Name: "whoami", Meta: meta}, nil)
	if err != nil || !strings.Contains(texts(res), `"example.com/trace":"t-1"`) {
		t.Fatalf("whoami: %v %s", err, texts(res))
	}
	if len(meta) != 1 {
		t.Errorf("RelayCall changed the _meta of its params: %v", meta)
	}
	book := &mcp.CallToolParams{Name: "book", Arguments: json.RawMessage(`{"date":"friday"}`)}
	first, err := c.RelayCall(ctx, book, nil)
	if err != nil || !first.NeedsInput() || first.InputRequests["booking"] == nil {
		t.Fatalf("the first round: %v %+v", err, first)
	}
	retry := *book
	retry.RequestState = first.RequestState
	retry.InputResponses = mcp.InputResponseMap{"booking": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 2}}}
	res, err = c.RelayCall(ctx, &retry, nil)
	if err != nil || !strings.HasPrefix(texts(res), "Booked 2 guests") {
		t.Fatalf("the retry: %v %q", err, texts(res))
	}
}

// TestRelayCallLimits: a relayed call is bounded by its server's limits
// as any call is: a config entry's "timeout" (named in the
// *TimeoutError), restarted by progress with "resetTimeoutOnProgress"; a
// tool's own "timeout" through Tool.RelayCall; "maxConcurrentCalls".
func TestRelayCallLimits(t *testing.T) {
	t.Parallel()
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	url := testserver.ServeStreamable(t, srv)
	client := func(t *testing.T, extra string) *mcpadapter.Client {
		t.Helper()
		cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"up": {"url": %q %s}}}`, url, extra)))
		if err != nil {
			t.Fatal(err)
		}
		c, err := mcpadapter.NewClient(cfg, &mcpadapter.ClientOptions{Relay: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	timeoutOf := func(t *testing.T, err error) *mcpadapter.TimeoutError {
		t.Helper()
		var te *mcpadapter.TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("got %v, want a *TimeoutError", err)
		}
		return te
	}
	slow := &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(`{"ms":10000}`)}
	// 40 steps of 10 ms: 400 ms, with a progress report every 10 ms.
	long := &mcp.CallToolParams{Name: "progress", Arguments: json.RawMessage(`{"steps":40}`)}

	t.Run("config timeout", func(t *testing.T) {
		_, err := client(t, `, "timeout": "200ms"`).RelayCall(testCtx(t), slow, nil)
		te := timeoutOf(t, err)
		if te.Kind != mcpadapter.TimeoutRequest || te.Limit != 200*time.Millisecond || te.Setting != `"timeout" of mcpServers.up in the config` {
			t.Errorf("%+v", te)
		}
	})
	t.Run("reset on progress", func(t *testing.T) {
		c := client(t, `, "timeout": "200ms", "resetTimeoutOnProgress": true`)
		if res, err := c.RelayCall(testCtx(t), long, nil); err != nil || texts(res) != "done" {
			t.Fatalf("a call reporting progress within its timeout: %v %q", err, texts(res))
		}
		_, err := client(t, `, "timeout": "200ms"`).RelayCall(testCtx(t), long, nil)
		if te := timeoutOf(t, err); te.Kind != mcpadapter.TimeoutRequest {
			t.Errorf("without resetTimeoutOnProgress: %+v", te)
		}
	})
	t.Run("total", func(t *testing.T) {
		_, err := client(t, `, "timeout": "200ms", "resetTimeoutOnProgress": true, "maxTotalTimeout": "150ms"`).RelayCall(testCtx(t), long, nil)
		te := timeoutOf(t, err)
		if te.Kind != mcpadapter.TimeoutTotal || te.Setting != `"maxTotalTimeout" of mcpServers.up in the config` {
			t.Errorf("%+v", te)
		}
	})
	t.Run("tool timeout", func(t *testing.T) {
		cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"up": {"url": %q, "tools": {"slow": {"timeout": "200ms"}}}}}`, url)))
		if err != nil {
			t.Fatal(err)
		}
		a, err := mcpadapter.New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		tools, err := a.Tools(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			if tl.OriginalName != "slow" {
				continue
			}
			_, err := tl.RelayCall(testCtx(t), slow, nil)
			if te := timeoutOf(t, err); te.Limit != 200*time.Millisecond || !strings.Contains(te.Setting, "ToolTransform.Timeout") {
				t.Errorf("%+v", te)
			}
			if _, err := tl.RelayCall(testCtx(t), &mcp.CallToolParams{Name: "echo"}, nil); err == nil {
				t.Error("Tool.RelayCall of another tool's name was made")
			}
			return
		}
		t.Fatal("no tool slow")
	})
	t.Run("max concurrent calls", func(t *testing.T) {
		c := client(t, `, "maxConcurrentCalls": 1`)
		ctx, cancel := context.WithCancel(testCtx(t))
		done := make(chan error, 1)
		before := st.Calls("slow")
		go func() {
			_, err := c.RelayCall(ctx, slow, nil)
			done <- err
		}()
		if err := st.Wait(testCtx(t), func(s *testserver.State) bool { return s.Calls("slow") > before }); err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
		defer wcancel()
		_, err := c.RelayCall(wctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}, nil)
		if err == nil || !strings.Contains(err.Error(), "still waiting for one of the 1 call slots") {
			t.Errorf("a call over the cap: %v", err)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled call: %v", err)
		}
	})
}
