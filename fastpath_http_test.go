package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpCell is one set-up of a go-sdk test server over streamable HTTP.
type httpCell struct {
	name string
	era  testserver.Era
	opts mcp.StreamableHTTPOptions
}

// fastHTTPCells: 2025-11-25 answering with event streams and with JSON,
// and stateless 2026-07-28.
func fastHTTPCells() []httpCell {
	return []httpCell{
		{"2025-11-25-sse", testserver.Legacy, mcp.StreamableHTTPOptions{}},
		{"2025-11-25-json", testserver.Legacy, mcp.StreamableHTTPOptions{JSONResponse: true}},
		{"2026-07-28", testserver.Modern, mcp.StreamableHTTPOptions{Stateless: true}},
	}
}

// recordingServer is a loopback streamable HTTP server that records the
// JSON-RPC id of every tools/call it gets, the headers of every POST, the
// methods of the messages posted, and counts new TCP connections.
type recordingServer struct {
	URL   string
	conns atomic.Int64

	mu      sync.Mutex
	callIDs []string
	methods []string
	headers []http.Header
	bodies  []string
}

func serveRecording(t *testing.T, srv *mcp.Server, opts mcp.StreamableHTTPOptions) *recordingServer {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &opts)
	rs := &recordingServer{}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(body, &msg)
			rs.mu.Lock()
			rs.methods = append(rs.methods, msg.Method)
			rs.headers = append(rs.headers, r.Header.Clone())
			rs.bodies = append(rs.bodies, string(body))
			if msg.Method == "tools/call" {
				rs.callIDs = append(rs.callIDs, string(msg.ID))
			}
			rs.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rs.conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	rs.URL = hs.URL
	return rs
}

// lastCallID returns the id of the latest tools/call.
func (rs *recordingServer) lastCallID() string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.callIDs) == 0 {
		return ""
	}
	return rs.callIDs[len(rs.callIDs)-1]
}

// posts returns the bodies and headers of the POSTs of method so far.
func (rs *recordingServer) posts(method string) (bodies []string, headers []http.Header) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i, m := range rs.methods {
		if m == method {
			bodies = append(bodies, rs.bodies[i])
			headers = append(headers, rs.headers[i])
		}
	}
	return bodies, headers
}

// fastID reports whether id (JSON) is one of the fast path's.
func fastID(id string) bool {
	n, err := strconv.ParseInt(id, 10, 64)
	return err == nil && n > stdio.FirstDirectID
}

// wantFast fails unless the latest call went on the fast path (or, with
// fast false, on go-sdk's).
func wantFast(t *testing.T, rs *recordingServer, fast bool, what string) {
	t.Helper()
	fast = fast && mcpadapter.FastPathBuilt
	if id := rs.lastCallID(); fastID(id) != fast {
		t.Errorf("%s: the call was sent with id %s: fast path %v, want %v", what, id, !fast, fast)
	}
}

// plainHTTPCalls are calls whose answers are text, structured content,
// error results and JSON-RPC errors.
var plainHTTPCalls = []struct{ tool, args string }{
	{"echo", `{"text":"héllo \"world\"\n"}`},
	{"add", `{"a":2,"b":40}`},
	{"fail", `{"message":"it broke"}`},
	{"fail_structured", `{}`},
	{"precise", `{}`},
	{"echo", `{"text":42}`},
	{"no_such_tool", `{}`},
	{"long_text", `{"bytes":500000}`},
	{"long_text", `{"bytes":1500000}`}, // over 1 MiB: handed over
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A plain call during which the server asks the user (elicitation, on a
// 2025-11-25 event stream) and logs works: the fast path hands the call's
// stream over to go-sdk, which answers the server's request and passes the
// log message on, as when it makes the call.
func TestHTTPFastPathServerMessagesDuringCall(t *testing.T) {
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
	var logs []string
	var mu sync.Mutex
	trace := &countingHandler{}
	c, err := mcpadapter.NewClient(rs.URL, &mcpadapter.ClientOptions{
		Logger: slog.New(trace),
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 4, "seating": "terrace"}}, nil
		},
		LogHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, fmt.Sprint(req.Params.Data))
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOK(t, ctx, c, "first")
	setLogLevel(t, ctx, rs)
	for i := range 3 {
		res, err := c.CallTool(ctx, "book", json.RawMessage(`{"date":"friday"}`), nil)
		if err != nil || !strings.Contains(res.Text(), "Booked 4 guests (terrace) on friday") {
			t.Fatalf("book %d: %v %q", i, err, res.Text())
		}
		wantFast(t, rs, true, "book")
		text := fmt.Sprint("chat ", i)
		res, err = c.CallTool(ctx, "chatty", json.RawMessage(fmt.Sprintf(`{"text":%q}`, text)), nil)
		if err != nil || res.Text() != text {
			t.Fatalf("chatty %d: %v %+v", i, err, res)
		}
		wantFast(t, rs, true, "chatty")
	}
	// go-sdk hands notifications to their handler on its own goroutine.
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		got = strings.Join(logs, ",")
		mu.Unlock()
		if strings.Count(got, ",") == 2 {
			break
		}
	}
	if got != "about chat 0,about chat 1,about chat 2" {
		t.Errorf("log messages: %q", got)
	}
	handed := 0
	for _, r := range trace.all() {
		if strings.Contains(r["msg"], "handing the call over to go-sdk") {
			handed++
		}
	}
	if !mcpadapter.FastPathBuilt {
		handed += 6 // every call goes on go-sdk's path
	}
	if handed != 6 {
		t.Errorf("%d calls were handed over to go-sdk, want 6", handed)
	}
	echoOK(t, ctx, c, "after")
}

// setLogLevel asks the server to send log messages of the session of the
// latest tools/call (the adapter never sets a level; go-sdk's server sends
// none until one is set).
func setLogLevel(t *testing.T, ctx context.Context, rs *recordingServer) {
	t.Helper()
	_, headers := rs.posts("tools/call")
	h := headers[len(headers)-1]
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"debug"}}`))
	for _, k := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept"} {
		req.Header.Set(k, h.Get(k))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) {
		t.Fatalf("logging/setLevel: %s %s", resp.Status, body)
	}
}

// A plain call whose context ends, or that runs out of
// ClientOptions.Timeout, returns the same error as on go-sdk's path, and
// the server is told (notifications/cancelled naming the fast path's id,
// with go-sdk's headers) and stops the tool; the connection goes on.
func TestHTTPFastPathCancel(t *testing.T) {
	t.Parallel()
	for _, cell := range fastHTTPCells() {
		t.Run(cell.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			cell.opts.PropagateRequestCancellation = true
			srv, st := testserver.NewWithState(testserver.Options{Era: cell.era})
			rs := serveRecording(t, srv, cell.opts)
			mk := func(disable bool) *mcpadapter.Client {
				c, err := mcpadapter.NewClient(rs.URL, &mcpadapter.ClientOptions{DisableFastPath: disable, Logger: quietLogger(), Timeout: 400 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				return c
			}
			fast, sdk := mk(false), mk(true)
			echoOK(t, ctx, fast, "first")
			echoOK(t, ctx, sdk, "first")
			call := func(c *mcpadapter.Client, after time.Duration) (msg string, cancelled error) {
				cctx, cancel := context.WithTimeout(ctx, after)
				defer cancel()
				within(t, 5*time.Second, "a cancelled call", func() {
					_, err := c.CallTool(cctx, "slow", json.RawMessage(`{"ms":5000}`), nil)
					if err == nil {
						t.Fatal("slow returned before its deadline")
					}
					msg, cancelled = err.Error(), err
				})
				return msg, cancelled
			}
			for _, after := range []time.Duration{150 * time.Millisecond, time.Minute} { // the caller's deadline, then Timeout's
				f, ferr := call(fast, after)
				id := rs.lastCallID()
				if !fastID(id) && mcpadapter.FastPathBuilt {
					t.Errorf("the slow call went with id %s, not on the fast path", id)
				}
				s, serr := call(sdk, after)
				if f != s || errors.Is(ferr, context.DeadlineExceeded) != errors.Is(serr, context.DeadlineExceeded) {
					t.Errorf("deadline %v:\nfast path: %s\ngo-sdk:    %s", after, f, s)
				}
				// The notice is sent in the background, as go-sdk sends its own.
				var h http.Header
				for deadline := time.Now().Add(5 * time.Second); h == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					bodies, headers := rs.posts("notifications/cancelled")
					for i, b := range bodies {
						if strings.Contains(b, `"requestId":`+id+`}`) {
							h = headers[i]
						}
					}
				}
				if h == nil {
					t.Fatalf("no notifications/cancelled for the call %s", id)
				}
				if h.Get("Mcp-Protocol-Version") == "" || (cell.era == testserver.Modern) != (h.Get("Mcp-Method") == "notifications/cancelled") {
					t.Errorf("the cancellation's headers: %v", h)
				}
			}
			for deadline := time.Now().Add(5 * time.Second); st.Cancellations() < 4 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			}
			if n := st.Cancellations(); n != 4 {
				t.Errorf("the server stopped %d slow calls, want 4", n)
			}
			echoOK(t, ctx, fast, "after the cancelled calls")
			wantFast(t, rs, true, "echo after the cancelled calls")
		})
	}
}

// A fast-path call on a session the server has expired (404) connects
// again and is sent again, once, as on go-sdk's path.
func TestHTTPFastPathExpiredSession(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	hs := testserver.StartStreamable(t, srv)
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOK(t, ctx, c, "first")
	for i := range 3 {
		hs.ExpireSessions()
		echoOK(t, ctx, c, fmt.Sprint("after expiry ", i))
	}
	if n := len(hs.SessionIDs()); n != 4 {
		t.Errorf("%d sessions, want 4 (one per expiry)", n)
	}
	if n := st.Calls("echo"); n != 4 {
		t.Errorf("the server ran echo %d times, want 4", n)
	}
}

// Static headers (ClientOptions.Headers) and a CallIdentity's headers
// reach the server on fast-path calls, with go-sdk's own headers.
func TestHTTPFastPathHeaders(t *testing.T) {
	t.Parallel()
	for _, cell := range fastHTTPCells() {
		t.Run(cell.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			rs := serveRecording(t, testserver.New(testserver.Options{Era: cell.era}), cell.opts)
			c, err := mcpadapter.NewClient(rs.URL, &mcpadapter.ClientOptions{Logger: quietLogger(), Headers: map[string]string{"X-Static": "s1"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			echoOK(t, ctx, c, "first")
			ictx := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "ann", Headers: map[string]string{"X-Principal": "ann"}})
			res, err := c.CallTool(ictx, "echo", json.RawMessage(`{"text":"hi"}`), nil)
			if err != nil || res.Text() != "hi" {
				t.Fatalf("echo: %v %+v", err, res)
			}
			wantFast(t, rs, true, "echo")
			_, headers := rs.posts("tools/call")
			h := headers[len(headers)-1]
			want := map[string]string{"X-Static": "s1", "X-Principal": "ann", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
			if cell.era == testserver.Modern {
				want["Mcp-Method"], want["Mcp-Name"] = "tools/call", "echo"
			}
			for k, v := range want {
				if got := h.Get(k); got != v {
					t.Errorf("header %s: %q, want %q", k, got, v)
				}
			}
			if h.Get("Mcp-Protocol-Version") == "" || (cell.era == testserver.Legacy) != (h.Get("Mcp-Session-Id") != "") {
				t.Errorf("headers: %v", h)
			}
		})
	}
}

// Sequential fast-path calls reuse their keep-alive connection, with the
// client's default transport.
func TestHTTPFastPathConnectionsReused(t *testing.T) {
	t.Parallel()
	for _, cell := range fastHTTPCells() {
		t.Run(cell.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			rs := serveRecording(t, testserver.New(testserver.Options{Era: cell.era}), cell.opts)
			c, err := mcpadapter.NewClient(rs.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			echoOK(t, ctx, c, "first")
			before := rs.conns.Load()
			const calls = 200
			for i := range calls {
				echoOK(t, ctx, c, fmt.Sprint(i))
			}
			wantFast(t, rs, true, "echo")
			if n := rs.conns.Load() - before; float64(n) > 0.01*calls {
				t.Errorf("%d calls opened %d new TCP connections, want at most %v", calls, n, 0.01*calls)
			}
		})
	}
}

// At 2026-07-28 a tool whose input schema has x-mcp-header annotations is
// called through go-sdk, which sends the Mcp-Param-* headers; the other
// tools of the server still take the fast path.
func TestHTTPFastPathLeavesParamHeadersToSDK(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := testserver.New(testserver.Options{Era: testserver.Modern})
	srv.AddTool(&mcp.Tool{Name: "region_echo", Description: "Echo the region.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	rs := serveRecording(t, srv, mcp.StreamableHTTPOptions{Stateless: true})
	a, err := mcpadapter.New(rs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcpadapter.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	for i := range 3 {
		if _, err := byName["echo"].Call(ctx, json.RawMessage(`{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the first plain call teaches the fast path the _meta
			wantFast(t, rs, true, "echo")
		}
		res, err := byName["region_echo"].Call(ctx, json.RawMessage(`{"region":"eu-west"}`))
		if err != nil || !strings.Contains(res.Text(), "eu-west") {
			t.Fatalf("region_echo: %v %+v", err, res)
		}
		wantFast(t, rs, false, "region_echo")
		_, headers := rs.posts("tools/call")
		if got := headers[len(headers)-1].Get("Mcp-Param-Region"); got != "eu-west" {
			t.Errorf("Mcp-Param-Region: %q, want eu-west", got)
		}
	}
}

// cutWriter ends the connection of a response once its first event (the
// priming event of a resumable stream) has been flushed.
type cutWriter struct {
	http.ResponseWriter
	cut bool
}

func (w *cutWriter) Write(p []byte) (int, error) {
	if w.cut {
		return 0, errors.New("cut by the test")
	}
	return w.ResponseWriter.Write(p)
}

func (w *cutWriter) Flush() {
	if w.cut {
		return
	}
	http.NewResponseController(w.ResponseWriter).Flush()
	w.cut = true
	if conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// A call's event stream that breaks after its priming event (a resumable
// 2025-11-25 stream) is resumed, with GET and Last-Event-ID, and the
// answer it then brings ends the call, as on go-sdk's path.
func TestHTTPFastPathResumesStream(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := testserver.New(testserver.Options{Era: testserver.Legacy})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	var resumes atomic.Int64
	var slowIDs []string
	var mu sync.Mutex
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumes.Add(1)
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"slow"`)) {
				var msg struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.Unmarshal(body, &msg)
				mu.Lock()
				slowIDs = append(slowIDs, string(msg.ID))
				mu.Unlock()
				w = &cutWriter{ResponseWriter: w}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	for _, disable := range []bool{false, true} {
		c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{DisableFastPath: disable, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		echoOK(t, ctx, c, "first")
		before := resumes.Load()
		res, err := c.CallTool(ctx, "slow", json.RawMessage(`{"ms":200}`), nil)
		if err != nil || res.Text() != "slept 200ms" {
			t.Errorf("DisableFastPath %v: slow: %v %+v", disable, err, res)
		}
		if resumes.Load() == before {
			t.Errorf("DisableFastPath %v: the stream was not resumed", disable)
		}
		mu.Lock()
		id := slowIDs[len(slowIDs)-1]
		mu.Unlock()
		if fastID(id) != (!disable && mcpadapter.FastPathBuilt) {
			t.Errorf("DisableFastPath %v: slow was sent with id %s", disable, id)
		}
		echoOK(t, ctx, c, "after")
		_ = c.Close()
	}
}
