package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHeaderToolServer serves, stateless at 2026-07-28, a tool region
// whose input schema binds its argument region to the header
// Mcp-Param-Region with the key x-mcp-header written as key (escaped, say).
func startHeaderToolServer(t *testing.T, key string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "hdr", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string",` + key + `:"Region"}}}`)
	s.AddTool(&mcp.Tool{Name: "region", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + string(req.Params.Arguments)}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestFastPathParamHeaderSchemas: a tool whose schema binds an argument to
// a header (x-mcp-header, its key written plainly, escaped, or in other
// case) has its calls checked for that header as go-sdk's handler checks
// them: a call without the header is refused alike on both paths, and
// never runs on the fast path.
func TestFastPathParamHeaderSchemas(t *testing.T) {
	for _, key := range []string{`"x-mcp-header"`, `"x-mcp-he\u0061der"`, `"\u0078-mcp-header"`, `"X-MCP-HEADER"`} {
		t.Run(key, func(t *testing.T) {
			up := startHeaderToolServer(t, key)
			servers := []Server{{Name: "hdr", Target: up}}
			fast, fastURL := startGateway(t, servers, &Options{})
			_, slowURL := startGateway(t, servers, &Options{slowPathOnly: true})
			c := fastCase{name: "no header", header: map[string]string{"Mcp-Name": "region"}, body: fastCall("1", `"region"`, `{"region":"eu"}`)}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders("region") {
				req.Header.Set(k, v)
			}
			if _, ok := fast.cat.tool("region"); !ok {
				t.Fatalf("the gateway lists %v", fast.cat.toolNames())
			}
			got, want := sendCase(t, fastURL, c), sendCase(t, slowURL, c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
			}
			if fast.fastRequestOf(req) != nil && want.Status == http.StatusBadRequest {
				t.Errorf("the fast path takes a call go-sdk refuses: %s", dump(want))
			}
		})
	}
}

// TestFastPathCloseMidCall: the gateway closing while a call runs on the
// fast path (direct, or on its session) ends the call's HTTP request as
// it ends one on go-sdk's handler: neither waits for the client to go
// away, and the client gets the same answer (none).
func TestFastPathCloseMidCall(t *testing.T) {
	call := fastCall("1", `"slow"`, `{"ms":6000}`)
	sides := []struct {
		name     string
		slowOnly bool
		body     string
		direct   bool
	}{
		{"go-sdk's handler", true, call, false},
		{"direct", false, call, true},
		{"session", false, strings.Replace(call, `"arguments"`, `"inputResponses":null,"arguments"`, 1), false},
	}
	var answers []string
	for _, side := range sides {
		up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
		g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: side.slowOnly})
		probe := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(side.body))
		for k, v := range fastHeaders("slow") {
			probe.Header.Set(k, v)
		}
		if f := g.fastRequestOf(probe); (f != nil) == side.slowOnly || f != nil && (f.call != nil) != side.direct {
			t.Fatalf("%s: the request takes another path (%+v)", side.name, f)
		}
		done := make(chan string, 1)
		go func() {
			req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, u, strings.NewReader(side.body))
			for k, v := range fastHeaders("slow") {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			done <- resp.Status + " " + string(b)
		}()
		deadline := time.Now().Add(5 * time.Second)
		for g.inflightCount() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		closed := make(chan error, 1)
		go func() { closed <- g.Close() }()
		select {
		case a := <-done:
			answers = append(answers, a)
		case <-time.After(4 * time.Second):
			t.Errorf("%s: the call's request still runs 4s after the gateway closed", side.name)
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: Close still runs", side.name)
		}
	}
	for i := 1; i < len(answers); i++ {
		if answers[i] != answers[0] {
			t.Errorf("the gateway closed mid-call: %s answered %q, %s %q", sides[0].name, answers[0], sides[i].name, answers[i])
		}
	}
}

// fastPost sends body to url as a 2026-07-28 tools/call of tool name in
// ctx and returns the answer's status and body ("" and the error's text
// when the request failed).
func fastPost(ctx context.Context, url, name, body string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	for k, v := range fastHeaders(name) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestFastPathConcurrentCalls: many calls at once on the fast path each
// get their own answer: their own id and their own result.
func TestFastPathConcurrentCalls(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	_, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, nil)
	const n = 48
	errs := make(chan string, n)
	ctx := testCtx(t, 60*time.Second)
	for i := range n {
		go func() {
			id := fmt.Sprint(1000 + i)
			if i%2 == 1 {
				id = `"s` + id + `"`
			}
			status, body := fastPost(ctx, u, "echo", fastCall(id, `"echo"`, `{"text":"t`+fmt.Sprint(i)+`"}`))
			switch {
			case status != http.StatusOK:
				errs <- fmt.Sprintf("call %d: %d %s", i, status, body)
			case !strings.Contains(body, `"id":`+id+`,`) && !strings.Contains(body, `"id":`+id+`}`):
				errs <- fmt.Sprintf("call %d (id %s) got another id: %s", i, id, body)
			case !strings.Contains(body, `"text":"t`+fmt.Sprint(i)+`"`) || strings.Count(body, `"text":"t`) != 1:
				errs <- fmt.Sprintf("call %d got another result: %s", i, body)
			default:
				errs <- ""
			}
		}()
	}
	for range n {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// TestFastPathClientsGoingAwayLeaveNothing: clients that go away mid-call
// on the fast path have their server's calls cancelled and leave no
// goroutine behind in the gateway.
func TestFastPathClientsGoingAwayLeaveNothing(t *testing.T) {
	for _, slowOnly := range []bool{true, false} {
		t.Run(fmt.Sprint("slowOnly=", slowOnly), func(t *testing.T) { testClientsGoingAway(t, slowOnly) })
	}
}

func testClientsGoingAway(t *testing.T, slowOnly bool) {
	srv, st := testserver.NewWithState(testserver.Options{Name: "up", Era: testserver.Modern})
	propagate := func(o *mcp.StreamableHTTPOptions) { o.PropagateRequestCancellation = true }
	up := testserver.StartStreamable(t, srv, testserver.Stateless(), propagate)
	g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: slowOnly})
	round := func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			fastPost(ctx, u, "slow", fastCall("1", `"slow"`, `{"ms":10000}`))
		}()
		calls := st.Calls("slow")
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		_ = st.Wait(wctx, func(s *testserver.State) bool { return s.Calls("slow") > calls })
		wcancel()
		cancel()
		<-done
		deadline := time.Now().Add(5 * time.Second)
		for g.inflightCount() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	round()
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(300 * time.Millisecond)
	base := runtime.NumGoroutine()
	before := st.Cancellations()
	const rounds = 8
	for range rounds {
		round()
	}
	http.DefaultClient.CloseIdleConnections()
	wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.Wait(wctx, func(s *testserver.State) bool { return s.Cancellations() >= before+rounds }); err != nil {
		t.Errorf("the server saw %d of %d calls cancelled", st.Cancellations()-before, rounds)
	}
	if n := settleGoroutines(base + 4); n > base+4 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after %d clients went away mid-call, %d before:\n%s", n, rounds, base, buf[:runtime.Stack(buf, true)])
	}
}

// startNoisyServer serves (stateless when stateless is set) a tool noisy
// that, during its call, sends progress under a token of its own making
// and log messages, then answers.
func startNoisyServer(t *testing.T, stateless bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "noisy", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "noisy", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 3 {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "made-up", Progress: float64(i)})
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Data: "log " + fmt.Sprint(i)}) //lint:ignore SA1019 a server of the deprecation window still logs
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quiet now"}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestFastPathUpstreamNotifications: a server that sends progress nobody
// asked for and log messages during a call has the call answered alike on
// the fast path and on go-sdk's handler.
func TestFastPathUpstreamNotifications(t *testing.T) {
	servers := []Server{{Name: "new", Target: startNoisyServer(t, true)}, {Name: "old", Target: startNoisyServer(t, false)}}
	fast, fastURL := startGateway(t, servers, &Options{})
	_, slowURL := startGateway(t, servers, &Options{slowPathOnly: true})
	for _, name := range []string{"new_noisy", "old_noisy"} {
		c := fastCase{name: name, header: map[string]string{"Mcp-Name": name}, body: fastCall("7", `"`+name+`"`, `{}`)}
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
		for k, v := range fastHeaders(name) {
			req.Header.Set(k, v)
		}
		if fast.fastRequestOf(req) == nil {
			t.Errorf("%s: not on the fast path", name)
		}
		got, want := sendCase(t, fastURL, c), sendCase(t, slowURL, c)
		if raw, _ := json.Marshal(got.Body); got.Status != http.StatusOK || !strings.Contains(string(raw), "quiet now") {
			t.Errorf("%s: the call got %s", name, dump(got))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast path answered\n%s\ngo-sdk answered\n%s", name, dump(got), dump(want))
		}
	}
}

// TestFastPathDraining: a call that comes while the gateway shuts down
// (a call in flight keeps it waiting) is refused on the fast path as on
// go-sdk's handler, and the call in flight is answered.
func TestFastPathDraining(t *testing.T) {
	var answers [2][2]string
	for i, slowOnly := range []bool{true, false} {
		up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
		g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: slowOnly})
		ctx := testCtx(t, 30*time.Second)
		first := make(chan string, 1)
		go func() {
			status, body := fastPost(ctx, u, "slow", fastCall("1", `"slow"`, `{"ms":1500}`))
			first <- fmt.Sprint(status, " ", body)
		}()
		deadline := time.Now().Add(5 * time.Second)
		for g.inflightCount() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		shut := make(chan error, 1)
		go func() { shut <- g.Shutdown(testCtx(t, 20*time.Second)) }()
		for !g.draining.Load() {
			time.Sleep(time.Millisecond)
		}
		status, body := fastPost(ctx, u, "echo", fastCall("2", `"echo"`, `{"text":"late"}`))
		answers[i] = [2]string{fmt.Sprint(status), body}
		if strings.Contains(body, `"text":"late"`) || !strings.Contains(body, `"code":-32013`) {
			t.Errorf("slow path only %v: the late call got %d %s", slowOnly, status, body)
		}
		if a := <-first; !strings.Contains(a, "slept 1500ms") {
			t.Errorf("slow path only %v: the call in flight got %s", slowOnly, a)
		}
		if err := <-shut; err != nil {
			t.Errorf("slow path only %v: Shutdown: %v", slowOnly, err)
		}
	}
	if answers[0] != answers[1] {
		t.Errorf("go-sdk's handler refused the late call with %q, the fast path with %q", answers[0], answers[1])
	}
}
