package gateway

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// TestCloseSlowReaderArrivingDuringClose: a client that sends a request
// while Gateway.Close is under way (here Close waits for a Reload, which
// ends a server whose session's DELETE does not return), and stops
// reading its large answer, keeps Close waiting no longer than one that
// stopped before Close was called.
func TestCloseSlowReaderArrivingDuringClose(t *testing.T) {
	big := mcp.NewServer(&mcp.Implementation{Name: "big"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	mcp.AddTool(big, &mcp.Tool{Name: "huge", Description: strings.Repeat("d", 8<<20)}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	stuck := stuckDelete(t)
	g, u := startGateway(t, []Server{{Name: "big", Target: big}, {Name: "stuck", Target: stuck.url}}, nil)
	id := rawSessionID(t, u)
	reloaded := make(chan error, 1)
	go func() { reloaded <- g.Reload(testCtx(t, 30*time.Second), []Server{{Name: "big", Target: big}}) }()
	within(t, stuck.deleted, 10*time.Second, "the DELETE of the removed server's session")
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	time.Sleep(200 * time.Millisecond) // Close waits for the Reload
	select {
	case <-reloaded:
		t.Fatal("the Reload ended before the request was sent: the test proves nothing")
	default:
	}
	conn := stalledRequest(t, u, map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": v1125, "Mcp-Session-Id": id,
	}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Close still waits 10s after it was called, for a client that does not read")
		_ = conn.Close()
		within(t, closed, 10*time.Second, "Close once the client went away")
	}
	within(t, reloaded, 10*time.Second, "the Reload")
}

// stuckServer is a handshake-era go-sdk server over loopback HTTP whose
// DELETE (a client ending its session) does not return until the test
// ends.
type stuckServer struct {
	url     string
	deleted chan struct{} // a DELETE came
}

func stuckDelete(t *testing.T) *stuckServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "stuck"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	mcp.AddTool(srv, &mcp.Tool{Name: "noop"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	s := &stuckServer{deleted: make(chan struct{}, 1)}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			select {
			case s.deleted <- struct{}{}:
			default:
			}
			select {
			case <-r.Context().Done():
			case <-t.Context().Done():
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}
