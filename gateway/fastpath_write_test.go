package gateway

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
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
	pu, _ := url.Parse(u)
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.RequestURI = ""
	for k, v := range fastHeaders(tool) {
		req.Header.Set(k, v)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	if err != nil || !strings.Contains(line, " 200 ") {
		t.Fatalf("the answer's status line: %q, %v", line, err)
	}
	return conn
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
