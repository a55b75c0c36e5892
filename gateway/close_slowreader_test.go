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

// TestCloseSlowReaderOnGoSDKPath: a client that stops reading a large
// answer written by go-sdk's handlers (a 2026-07-28 request off the fast
// path, a handshake-era session's) keeps Gateway.Close waiting no longer
// than its own work: Close ends the answer's write, and the gateway's
// goroutines with it.
func TestCloseSlowReaderOnGoSDKPath(t *testing.T) {
	for _, side := range []struct {
		name string
		v    string
	}{{"2026-07-28 off the fast path", v0728}, {"2025-11-25 session", v1125}} {
		t.Run(side.name, func(t *testing.T) {
			up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
			g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: true})
			base := runtime.NumGoroutine()
			body := fastCall("1", `"long_text"`, `{"bytes":8000000}`)
			header := fastHeaders("long_text")
			if side.v == v1125 {
				header = map[string]string{
					"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
					"Mcp-Protocol-Version": v1125, "Mcp-Session-Id": rawSessionID(t, u),
				}
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long_text","arguments":{"bytes":8000000}}}`
			}
			conn := stalledRequest(t, u, header, body)
			time.Sleep(500 * time.Millisecond) // the answer fills the connection's buffers
			closed := make(chan error, 1)
			go func() { closed <- g.Close() }()
			select {
			case err := <-closed:
				if err != nil {
					t.Errorf("Close: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("Close still waits 5s after it was called, for a client that does not read")
				_ = conn.Close()
				select {
				case <-closed:
				case <-time.After(10 * time.Second):
					t.Fatal("Close still waits after the client went away")
				}
			}
			_ = conn.Close()
			http.DefaultClient.CloseIdleConnections()
			if n := settleGoroutines(base); n > base {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after Close, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// rawSessionID opens a handshake-era session at u with plain requests and
// returns its id.
func rawSessionID(t *testing.T, u string) string {
	t.Helper()
	post := func(body string, session string) *http.Response {
		req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodPost, u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", v1125)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v1125+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, "")
	id := resp.Header.Get("Mcp-Session-Id")
	_, _ = bufio.NewReader(resp.Body).ReadString('}')
	resp.Body.Close()
	if id == "" {
		t.Fatalf("initialize: no session (%d)", resp.StatusCode)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, id).Body.Close()
	return id
}

// stalledRequest sends body to u with header over a connection whose
// receive buffer is small, reads the status line of the answer and
// nothing more: a client that stops reading.
func stalledRequest(t *testing.T, u string, header map[string]string, body string) net.Conn {
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
	for k, v := range header {
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
