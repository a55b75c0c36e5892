package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastSides are the two ways the fast path answers a call: direct
// (direct.go), or through the request's go-sdk session (a retry's
// inputResponses, even null, make a call not plain).
func fastSides(call string) []struct{ name, body string } {
	return []struct{ name, body string }{
		{"direct", call},
		{"session", strings.Replace(call, `"arguments"`, `"inputResponses":null,"arguments"`, 1)},
	}
}

// slowReader sends body to u as a 2026-07-28 tools/call of tool over a
// connection whose receive buffer is small, reads the status line of the
// answer and nothing more: a client that stops reading.
func slowReader(t *testing.T, u, tool, body string) net.Conn {
	t.Helper()
	return stalledRequest(t, u, fastHeaders(tool), body)
}

// TestFastPathCloseSlowReader: a client that stops reading a large answer
// on the fast path keeps neither Gateway.Close nor the gateway's other
// clients waiting: Close returns, and the answer's write ends when the
// client goes away.
func TestFastPathCloseSlowReader(t *testing.T) {
	for _, side := range fastSides(fastCall("1", `"long_text"`, `{"bytes":8000000}`)) {
		t.Run(side.name, func(t *testing.T) {
			up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
			g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, nil)
			probe := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(side.body))
			for k, v := range fastHeaders("long_text") {
				probe.Header.Set(k, v)
			}
			if f := g.fastRequestOf(probe); f == nil || (f.call != nil) != (side.name == "direct") {
				t.Fatalf("the call takes another path: %+v", f)
			}
			base := runtime.NumGoroutine()
			conn := slowReader(t, u, "long_text", side.body)
			// The answer fills the connection's buffers: the write waits.
			deadline := time.Now().Add(10 * time.Second)
			for g.inflightCount() > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			if status, body := fastPost(testCtx(t, 10*time.Second), u, "echo", fastCall("2", `"echo"`, `{"text":"other"}`)); status != http.StatusOK || !strings.Contains(body, `"text":"other"`) {
				t.Errorf("another client's call while one reads slowly: %d %.300s", status, body)
			}
			closed := make(chan error, 1)
			go func() { closed <- g.Close() }()
			select {
			case err := <-closed:
				if err != nil {
					t.Errorf("Close: %v", err)
				}
				_ = conn.Close()
			case <-time.After(5 * time.Second):
				t.Errorf("Close still waits 5s after it was called, for a client that does not read")
				_ = conn.Close()
				select {
				case <-closed:
				case <-time.After(10 * time.Second):
					t.Fatal("Close still waits after the client went away")
				}
			}
			http.DefaultClient.CloseIdleConnections()
			if n := settleGoroutines(base); n > base {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after the slow client went away, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// answerUnit is the text the long_text tool repeats in the answers below:
// two- and four-byte UTF-8 (cut anywhere by the connection), HTML and a
// line separator.
const answerUnit = "é😀<&\u2028"

// answerSizes are the sizes of the texts asked for: within one buffer of
// net/http's, past it, and past the connection's buffers.
var answerSizes = []int{1, 4000, 70000, 3 << 20}

// longText is what the long_text tool returns for bytes and unit.
func longText(bytes int, unit string) string {
	return strings.ToValidUTF8(strings.Repeat(unit, bytes/len(unit)+1)[:bytes], "")
}

// longTextCall is a 2026-07-28 call of long_text for bytes of
// answerUnit.
func longTextCall(id string, bytes int) string {
	args, _ := json.Marshal(map[string]any{"bytes": bytes, "unit": answerUnit})
	return fastCall(id, `"long_text"`, string(args))
}

// TestFastPathAnswersGoSDKClient: go-sdk's client at 2026-07-28 gets
// answers of every size whole, on the fast path.
func TestFastPathAnswersGoSDKClient(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	_, u, fast := startCountingGateway(t, []Server{{Name: "up", Target: up.URL}}, false)
	cs := connect(t, u, v0728, nil)
	for _, n := range answerSizes {
		res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "long_text", Arguments: map[string]any{"bytes": n, "unit": answerUnit}})
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if got, want := texts(res), longText(n, answerUnit); got != want {
			t.Errorf("%d bytes: got %d bytes of text, want %d (%.40q…)", n, len(got), len(want), got)
		}
	}
	if got := fast.Load(); got != int32(len(answerSizes)) {
		t.Errorf("%d of %d calls took the fast path", got, len(answerSizes))
	}
}

// TestFastPathAnswersTypeScriptTransport: the TypeScript SDK's streamable
// HTTP transport (npm @modelcontextprotocol/sdk, under Node 22), sending
// 2026-07-28 calls, reads answers of every size whole, direct and through
// a session, each with its own id and the gateway's name.
func TestFastPathAnswersTypeScriptTransport(t *testing.T) {
	node := testenv.Node(t)
	sdk := filepath.Join(testenv.NPMDir(t), "node_modules", "@modelcontextprotocol", "sdk")
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	_, u, fast := startCountingGateway(t, []Server{{Name: "up", Target: up.URL}}, false)
	type call struct {
		ID        int            `json:"id"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Extra     map[string]any `json:"extra,omitempty"`
	}
	var calls []call
	for i, n := range answerSizes {
		args := map[string]any{"bytes": n, "unit": answerUnit}
		calls = append(calls, call{ID: 10 + i, Name: "long_text", Arguments: args},
			call{ID: 20 + i, Name: "long_text", Arguments: args, Extra: map[string]any{"inputResponses": nil}})
	}
	arg, _ := json.Marshal(calls)
	cmd := exec.CommandContext(testCtx(t, 120*time.Second), node, "testdata/tsfast.mjs", sdk, u, string(arg))
	cmd.Env = testenv.NodeEnv(node)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tsfast: %v\n%s", err, stderr.String())
	}
	var got []struct {
		ID         int
		Text       string
		ResultType string
		ServerName string
		Error      string
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(calls) {
		t.Fatalf("tsfast printed %.500q: %v", out, err)
	}
	for i, c := range calls {
		g, want := got[i], longText(c.Arguments["bytes"].(int), answerUnit)
		if g.ID != c.ID || g.Error != "" || g.Text != want || g.ResultType != "complete" || g.ServerName != "mcpadapter-gateway" {
			t.Errorf("call %d: id %d, error %q, %d bytes of text (want %d), result type %q, server %q", c.ID, g.ID, g.Error, len(g.Text), len(want), g.ResultType, g.ServerName)
		}
	}
	if n := fast.Load(); n != int32(len(calls)) {
		t.Errorf("%d of %d calls took the fast path", n, len(calls))
	}
}

// TestFastPathAnswersPlainHTTP: a plain HTTP client reads each answer on
// the fast path (direct and through a session) as one SSE event framed
// whole (its Content-Length, when there is one, the body's), and an
// HTTP/1.0 client, or one that asks for the connection to close, gets the
// answer and then the connection's end.
func TestFastPathAnswersPlainHTTP(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	_, u, fast := startCountingGateway(t, []Server{{Name: "up", Target: up.URL}}, false)
	sent := 0
	for _, n := range answerSizes {
		for _, side := range fastSides(longTextCall("7", n)) {
			sent++
			req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, u, strings.NewReader(side.body))
			for k, v := range fastHeaders("long_text") {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%s, %d bytes: %s %q, %v", side.name, n, resp.Status, resp.Header.Get("Content-Type"), err)
			}
			if resp.ContentLength >= 0 && resp.ContentLength != int64(len(body)) {
				t.Errorf("%s, %d bytes: Content-Length %d, body %d bytes", side.name, n, resp.ContentLength, len(body))
			}
			checkSSEAnswer(t, fmt.Sprintf("%s, %d bytes", side.name, n), body, `7`, longText(n, answerUnit))
		}
	}
	pu, _ := url.Parse(u)
	for _, proto := range []string{"HTTP/1.0", "HTTP/1.1\r\nConnection: close"} {
		for _, side := range fastSides(longTextCall(`"last"`, 70000)) {
			sent++
			conn, err := net.Dial("tcp", pu.Host)
			if err != nil {
				t.Fatal(err)
			}
			var head strings.Builder
			fmt.Fprintf(&head, "POST %s %s\r\nHost: %s\r\nContent-Length: %d\r\n", pu.Path, proto, pu.Host, len(side.body))
			for k, v := range fastHeaders("long_text") {
				fmt.Fprintf(&head, "%s: %s\r\n", k, v)
			}
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, head.String()+"\r\n"+side.body); err != nil {
				t.Fatal(err)
			}
			all, err := io.ReadAll(conn) // to the connection's end
			conn.Close()
			if err != nil {
				t.Fatalf("%s, %s: the connection did not end: %v", proto, side.name, err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
			if err != nil {
				t.Fatalf("%s, %s: %v", proto, side.name, err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("%s, %s: %v", proto, side.name, err)
			}
			checkSSEAnswer(t, proto+", "+side.name, body, `"last"`, longText(70000, answerUnit))
		}
	}
	if n := fast.Load(); n != int32(sent) {
		t.Errorf("%d of %d calls took the fast path", n, sent)
	}
}

// checkSSEAnswer checks that body is one SSE event holding the JSON-RPC
// answer to id (its JSON) with text.
func checkSSEAnswer(t *testing.T, what string, body []byte, id, text string) {
	t.Helper()
	data, ok := bytes.CutPrefix(body, []byte("event: message\ndata: "))
	data, end := bytes.CutSuffix(data, []byte("\n\n"))
	if !ok || !end || bytes.ContainsAny(data, "\r\n") {
		t.Errorf("%s: not one SSE event: %.200q…%q", what, body, body[max(0, len(body)-20):])
		return
	}
	var m struct {
		ID     json.RawMessage
		Result mcp.CallToolResult
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if string(m.ID) != id || texts(&m.Result) != text {
		t.Errorf("%s: id %s, %d bytes of text, want id %s, %d bytes", what, m.ID, len(texts(&m.Result)), id, len(text))
	}
}

// TestFastPathClientGoneMidWrite: clients that go away while a large
// answer is written to them (having read a little of it) leave no
// goroutine behind, and the gateway serves the next call.
func TestFastPathClientGoneMidWrite(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, nil)
	warm := func() {
		if status, body := fastPost(testCtx(t, 10*time.Second), u, "echo", fastCall("1", `"echo"`, `{"text":"next"}`)); status != http.StatusOK || !strings.Contains(body, `"text":"next"`) {
			t.Fatalf("a call: %d %.300s", status, body)
		}
		http.DefaultClient.CloseIdleConnections()
	}
	warm()
	time.Sleep(200 * time.Millisecond)
	base := runtime.NumGoroutine()
	for _, side := range fastSides(longTextCall("2", 8000000)) {
		// The answer's first byte comes once the whole answer is
		// made: 8 MB through the gateway under -race on a loaded
		// machine takes a while.
		req, _ := http.NewRequestWithContext(testCtx(t, 2*time.Minute), http.MethodPost, u, strings.NewReader(side.body))
		for k, v := range fastHeaders("long_text") {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 64<<10)); err != nil {
			t.Fatalf("%s: %v", side.name, err)
		}
		resp.Body.Close() // unread: the connection closes
	}
	deadline := time.Now().Add(10 * time.Second)
	for g.inflightCount() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	warm()
	if n := settleGoroutines(base); n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after clients went away mid-answer, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}
