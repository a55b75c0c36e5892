package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call handed over to go-sdk by the fast path (here: an answer over
// 1 MiB) must reach its result when the server writes the answer's id
// after its result, as the TypeScript SDK does ({"result":…,"jsonrpc":
// "2.0","id":N}): the fast path's id must be found and replaced by
// go-sdk's wherever it stands in the message.
func TestHTTPFastPathHandOffIDAfterResult(t *testing.T) {
	t.Parallel()
	url := testenv.StartEverythingHTTP(t, testenv.TransportStreamable)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rec := &callIDRecorder{base: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
		Logger: quietLogger(), HTTPClient: &http.Client{Transport: rec}, MaxMessageBytes: 8 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	for _, n := range []int{100 << 10, 1200 << 10} {
		msg := strings.Repeat("x", n)
		args, _ := json.Marshal(map[string]string{"message": msg})
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		res, err := c.CallTool(cctx, "echo", json.RawMessage(args), nil)
		ccancel()
		if err != nil {
			t.Fatalf("echo of %d bytes: %v", n, err)
		}
		if got := res.Text(); !strings.Contains(got, msg) {
			t.Errorf("echo of %d bytes: got %d bytes of text", n, len(got))
		}
		if id := rec.last(); fastID(id) != mcpadapter.FastPathBuilt {
			t.Errorf("echo of %d bytes: sent with id %s; fast path built: %v", n, id, mcpadapter.FastPathBuilt)
		}
	}
}

// A fast-path call that gets 401 (the access token expired) is handed
// over to go-sdk, whose OAuth handler authorizes again and sends the call
// again: the caller gets the result, in both eras, with the same 401s and
// sign-ins as on go-sdk's path.
func TestHTTPFastPathUnauthorizedCall(t *testing.T) {
	t.Parallel()
	got := map[string]authOutcome{}
	var mu sync.Mutex
	t.Run("group", func(t *testing.T) {
		for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
			for _, disable := range []bool{false, true} {
				name := fmt.Sprintf("%v/disable=%v", era, disable)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					o := unauthorizedCall(t, era, disable)
					mu.Lock()
					got[name] = o
					mu.Unlock()
				})
			}
		}
	})
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		f, s := got[fmt.Sprintf("%v/disable=false", era)], got[fmt.Sprintf("%v/disable=true", era)]
		if f != s {
			t.Errorf("%v: after the token expired: fast path %+v, go-sdk %+v", era, f, s)
		}
	}
}

// authOutcome is what a call after the access token expired took.
type authOutcome struct {
	unauthorized, signIns, requests int
}

// unauthorizedCall makes a call after the access token expired and
// returns the 401s, sign-ins and MCP requests it took.
func unauthorizedCall(t *testing.T, era testserver.Era, disable bool) (o authOutcome) {
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{Era: era})})
	user := &browser{}
	rec := &callIDRecorder{base: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{
		Auth: &mcpadapter.OAuth{OpenURL: user.open}, ConnectTimeout: 10 * time.Second, DisableFastPath: disable,
		Logger: quietLogger(), HTTPClient: &http.Client{Transport: rec},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	echoOK(t, ctx, c, "first") // teaches a 2026-07-28 session the _meta
	echoOK(t, ctx, c, "second")
	if id := rec.last(); fastID(id) != (mcpadapter.FastPathBuilt && !disable) {
		t.Fatalf("sent with id %s; fast path built: %v", id, mcpadapter.FastPathBuilt)
	}
	before := as.Counts()
	as.ExpireAccessTokens()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := c.CallTool(cctx, "echo", json.RawMessage(`{"text":"after 401"}`), nil)
	if err != nil || res.IsError || res.Text() != "after 401" {
		t.Fatalf("call after the token expired: %v, %+v", err, res)
	}
	after := as.Counts()
	if after.Unauthorized <= before.Unauthorized {
		t.Errorf("counts before %+v, after %+v: no 401", before, after)
	}
	echoOK(t, ctx, c, "third")
	if id := rec.last(); fastID(id) != (mcpadapter.FastPathBuilt && !disable) {
		t.Errorf("after the new sign-in: sent with id %s; fast path built: %v", id, mcpadapter.FastPathBuilt)
	}
	o.unauthorized = after.Unauthorized - before.Unauthorized
	o.signIns = after.CodeExchanges - before.CodeExchanges + after.Refreshes - before.Refreshes
	o.requests = as.Counts().MCPRequests - before.MCPRequests
	return o
}

// With the protocol trace on, a call during which the server logs (which
// the fast path would hand over to go-sdk) shows in the trace as on
// go-sdk's path: its request sent once, its answer received once. (With
// the trace on, calls over HTTP take go-sdk's path.)
func TestHTTPFastPathTraceOfHandedOverCall(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := testserver.New(testserver.Options{Era: testserver.Legacy})
	mcp.AddTool(srv, &mcp.Tool{Name: "chatty", Description: "Log, then echo."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 a 2025-11-25 server still logs during a call.
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "about " + in.Text}); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	rs := serveRecording(t, srv, mcp.StreamableHTTPOptions{})
	count := func(disable bool) string {
		trace := &countingHandler{}
		c, err := mcpadapter.NewClient(rs.URL, &mcpadapter.ClientOptions{Logger: slog.New(trace), Trace: true, DisableFastPath: disable})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		echoOK(t, ctx, c, "first")
		setLogLevel(t, ctx, rs)
		text := fmt.Sprintf("chat %v", disable)
		res, err := c.CallTool(ctx, "chatty", json.RawMessage(fmt.Sprintf(`{"text":%q}`, text)), nil)
		if err != nil || res.Text() != text {
			t.Fatalf("chatty: %v %+v", err, res)
		}
		wantFast(t, rs, false, "chatty with the trace on")
		sent, received := 0, 0
		for _, r := range trace.all() {
			switch {
			case r["msg"] == "mcp send" && strings.Contains(r["message"], `"chatty"`):
				sent++
			case strings.HasPrefix(r["msg"], "mcp ") && r["msg"] != "mcp send" && strings.Contains(r["message"], `"`+text+`"`):
				received++
			}
		}
		return fmt.Sprintf("the call sent %d times, its answer received %d times", sent, received)
	}
	if f, s := count(false), count(true); f != s {
		t.Errorf("trace:\nfast path: %s\ngo-sdk:    %s", f, s)
	}
}

// The legacy HTTP+SSE transport never takes the fast path: named by its
// /sse URL, or found by the fallback from streamable HTTP.
func TestHTTPFastPathNeverOnLegacySSE(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{Era: testserver.Legacy}) }, nil)
	var mu sync.Mutex
	var ids []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				mu.Lock()
				ids = append(ids, string(msg.ID))
				mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	for _, path := range []string{"/sse", "/mcp"} {
		c, err := mcpadapter.NewClient(hs.URL+path, &mcpadapter.ClientOptions{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			echoOK(t, ctx, c, fmt.Sprint(path, " ", i))
		}
		info, err := c.Connect(ctx)
		if err != nil || info.Transport != "sse" {
			t.Errorf("%s: transport %q, %v; want sse", path, info.Transport, err)
		}
		_ = c.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 6 {
		t.Fatalf("the server saw %d calls, want 6", len(ids))
	}
	for _, id := range ids {
		if fastID(id) {
			t.Errorf("a call over the SSE transport went with the fast path's id %s", id)
		}
	}
}

// The fast path's background cancellation notice ends with the client:
// against a server that never answers it, Close ends it (the server sees
// its request end) instead of leaving it running until its own timeout.
func TestHTTPFastPathCancelNoticeEndsWithClose(t *testing.T) {
	t.Parallel()
	if !mcpadapter.FastPathBuilt {
		// go-sdk's own notice is not ended by Close: it runs on to its
		// 5 s bound (notifyCancellationTimeout) against this server.
		t.Skip("checks the fast path's notice; go-sdk's runs on to its own 5 s bound")
	}
	ctx := testCtx(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{Era: testserver.Legacy}) }, nil)
	ended := make(chan struct{}, 4)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
				<-r.Context().Done() // never answered
				ended <- struct{}{}
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Logger: quietLogger(), StopTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	echoOK(t, ctx, c, "first")
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = c.CallTool(cctx, "slow", json.RawMessage(`{"ms":3000}`), nil)
	cancel()
	if err == nil {
		t.Fatal("slow returned before its deadline")
	}
	time.Sleep(100 * time.Millisecond) // the notice is on its way
	_ = c.Close()
	select {
	case <-ended:
	case <-time.After(2 * time.Second): // the notice's own bound is 5 s
		t.Error("the cancellation notice still ran 2 s after Close")
	}
}

// cancelOnHandOff is a slog.Handler that ends a context when the fast
// path hands a call over to go-sdk: after the fast path's POST of the
// call, before go-sdk's call starts.
type cancelOnHandOff struct{ cancel context.CancelFunc }

func (h cancelOnHandOff) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOnHandOff) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h cancelOnHandOff) WithGroup(string) slog.Handler            { return h }
func (h cancelOnHandOff) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "handing the call over to go-sdk") {
		h.cancel()
	}
	return nil
}

// A call whose context ends between the fast path's POST and go-sdk's
// taking it over (the server asked the user something on the call's
// stream) is cancelled at the server: it receives notifications/cancelled
// for the id it knows the call by, and stops the tool.
func TestHTTPFastPathHandOffCancelledBetweenPOSTs(t *testing.T) {
	t.Parallel()
	if !mcpadapter.FastPathBuilt {
		t.Skip("a hand-over needs the fast path; go-sdk's own cancellation is TestHTTPFastPathCancel's")
	}
	ctx := testCtx(t)
	srv := testserver.New(testserver.Options{Era: testserver.Legacy})
	stopped := make(chan struct{}, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "Ask the user, then wait."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			_, _ = req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})
			select {
			case <-ctx.Done():
				stopped <- struct{}{}
			case <-time.After(15 * time.Second): // bounds the test
			}
			return nil, nil, ctx.Err()
		})
	rs := serveRecording(t, srv, mcp.StreamableHTTPOptions{})
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := mcpadapter.NewClient(rs.URL, &mcpadapter.ClientOptions{
		Logger: slog.New(cancelOnHandOff{cancel}),
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOK(t, ctx, c, "first")
	if _, err := c.CallTool(cctx, "ask", json.RawMessage(`{}`), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("ask: %v, want context.Canceled", err)
	}
	id := rs.lastCallID()
	if !fastID(id) {
		t.Fatalf("ask was sent with id %s, not on the fast path", id)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second): // a bound: the notice is sent at once
		t.Fatal("the server never stopped the tool")
	}
	bodies, _ := rs.posts("notifications/cancelled")
	found := false
	for _, b := range bodies {
		found = found || strings.Contains(b, `"requestId":`+id+`}`)
	}
	if !found {
		t.Errorf("no notifications/cancelled for the call's id %s: %q", id, bodies)
	}
	echoOK(t, ctx, c, "after")
}
