package gateway

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// lastEventID returns the id of the last event in body, an answer's SSE
// stream.
func lastEventID(t *testing.T, body string) string {
	t.Helper()
	id := ""
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "id: "); ok {
			id = v
		}
	}
	if id == "" {
		t.Fatalf("no event id in %q", body)
	}
	return id
}

// rawAnswer is an answer read whole off its connection.
type rawAnswer struct {
	status    int
	header    http.Header
	body      string
	bodyErr   error // reading the body to its end
	closeConn bool  // Connection: close (the stream taken over)
}

// getRaw sends a GET of session id on a connection of its own, with the
// extra header lines extra, and reads the whole answer.
func getRaw(t *testing.T, addr, id, extra string) rawAnswer {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n%s\r\n", addr, id, v1125, extra)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the answer to a GET of the session: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	return rawAnswer{status: resp.StatusCode, header: resp.Header, body: string(b), bodyErr: err, closeConn: resp.Close}
}

// TestStreamConnResumeEnded: a client resuming, with Last-Event-ID, a
// stream of its session that has ended and has no event after that id
// (the answer to a POST it read whole) gets what net/http's path gives
// it: a 200 with an empty body, not a connection closed without an
// answer. Each side is checked to have taken its path (Connection:
// close on the connection taken over, kept alive without
// TakeOverStreams).
func TestStreamConnResumeEnded(t *testing.T) {
	answers := map[bool]rawAnswer{}
	for _, take := range []bool{false, true} {
		_, addr := startIdleGateway(t, &Options{TakeOverStreams: take}, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
		ctx := testCtx(t, 30*time.Second)
		c, err := openIdle(ctx, addr, holdKeepAlive)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.close)
		body, err := c.post(ctx, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, true)
		if err != nil {
			t.Fatal(err)
		}
		a := getRaw(t, addr, c.id, "Last-Event-ID: "+lastEventID(t, body)+"\r\n")
		if a.closeConn != take {
			t.Fatalf("TakeOverStreams %v: Connection: close %v, the other path taken", take, a.closeConn)
		}
		answers[take] = a
	}
	off, on := answers[false], answers[true]
	if off.status != http.StatusOK || off.bodyErr != nil || off.body != "" {
		t.Fatalf("net/http's path: %d %q %v, want 200 and an empty body", off.status, off.body, off.bodyErr)
	}
	if on.status != off.status || on.body != off.body || on.bodyErr != nil || on.header.Get("Content-Type") != off.header.Get("Content-Type") {
		t.Errorf("taken over: %d %q (%v) %v; net/http's: %d %q %v", on.status, on.body, on.bodyErr, on.header, off.status, off.body, off.header)
	}
}

// TestStreamConnTLS: behind an http.Server with TLS, a session's stream
// over HTTP/1.1 is taken over on its *tls.Conn and carries the session's
// events, and Gateway.Close ends it; over HTTP/2 it is not taken over
// (net/http's stream, on a connection that stays up for the client's
// other requests) and carries them as well.
func TestStreamConnTLS(t *testing.T) {
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	ts := httptest.NewUnstartedServer(g)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	c, ls := openLiveIdle(t, g, addr)
	ctx := testCtx(t, 30*time.Second)
	tlsAddr := strings.TrimPrefix(ts.URL, "https://")

	// HTTP/2: net/http's.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("the stream over HTTP/2: %s %s, Connection: close %v", resp.Proto, resp.Status, resp.Close)
	}
	h2 := &streamClient{resp: resp, body: bufio.NewReader(resp.Body)}
	waitFor(t, "the HTTP/2 stream", func() bool { return g.live.streaming(ls) })
	g.SetPolicy(denyTool("slow"))
	h2.eventOf(t, "notifications/tools/list_changed")
	resp.Body.Close()
	waitFor(t, "the HTTP/2 stream to end", func() bool { return !g.live.streaming(ls) })

	// HTTP/1.1 on TLS: taken over.
	conn, err := tls.Dial("tcp", tlsAddr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n\r\n", tlsAddr, c.id, v1125)
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Fatalf("the stream over HTTP/1.1 on TLS: %s, Connection: close %v (not taken over)", resp.Status, resp.Close)
	}
	s := &streamClient{conn: conn, resp: resp, body: bufio.NewReader(resp.Body)}
	waitFor(t, "the stream on TLS", func() bool { return g.live.streaming(ls) })
	g.SetPolicy(nil)
	s.eventOf(t, "notifications/tools/list_changed")
	closeEndsStream(t, g, s)
}

// TestStreamConnChecksFirst: a GET naming a live session, with a Host
// that is not the gateway's (DNS rebinding) or an Origin not allowed, is
// refused (403) before any stream is taken over: the session gets no
// stream.
func TestStreamConnChecksFirst(t *testing.T) {
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	c, ls := openLiveIdle(t, g, addr)
	for _, bad := range []string{"Host: rebind.example\r\n", "Origin: https://evil.example\r\n"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		host := "Host: " + addr + "\r\n"
		if strings.HasPrefix(bad, "Host:") {
			host, bad = bad, ""
		}
		fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\n%sAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n%s\r\n", host, c.id, v1125, bad)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusForbidden || resp.Close {
			t.Errorf("%q: %s, Connection: close %v, want 403 from net/http's path", host+bad, resp.Status, resp.Close)
		}
		if g.live.streaming(ls) {
			t.Errorf("%q: the session has a stream", host+bad)
		}
	}
}

// TestStreamConnDelete: a session ended by its client (DELETE) ends its
// taken-over stream: the client reads the stream's end, and the session
// has no stream.
func TestStreamConnDelete(t *testing.T) {
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	c, ls := openLiveIdle(t, g, addr)
	s := openTakenOver(t, g, addr, c.id, ls)
	fmt.Fprintf(c.conn, "DELETE /mcp HTTP/1.1\r\nHost: %s\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n\r\n", addr, c.id, v1125)
	resp, err := http.ReadResponse(bufio.NewReader(c.conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	for {
		if _, _, err := s.event(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the stream still open after its session ended: %v", err)
			}
			break
		}
	}
	waitFor(t, "the session's stream to end", func() bool { return !g.live.streaming(ls) })
}

// TestStreamConnOtherPrincipal: mallory, signed in, naming alice's
// session in a GET (her standalone stream, or a resumption of it) gets
// go-sdk's 403 on net/http's path, nothing taken over and no stream for
// alice's session; a session id guessed gets 404 the same way; alice's
// own GET is taken over.
func TestStreamConnOtherPrincipal(t *testing.T) {
	upURL := testserver.StartStreamable(t, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}), testserver.Stateless()).URL
	g, endpoint := startForPrincipals(t, []Server{{Name: "up", Target: upURL}}, &Options{TakeOverStreams: true}, "alice", "mallory")
	addr := strings.TrimPrefix(strings.TrimSuffix(endpoint, "/mcp"), "http://")
	ctx := testCtx(t, 30*time.Second)
	post := func(id, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", v1125)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"alice","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("alice's initialize: %s", resp.Status)
	}
	if resp := post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("alice's notifications/initialized: %s", resp.Status)
	}
	ls := g.live.get(id, "alice")
	if ls == nil {
		t.Fatal("alice's session is not live")
	}
	for _, c := range []struct {
		what, id, extra string
		status          int
	}{
		{"mallory's GET of alice's session", id, "Authorization: Bearer mallory\r\n", http.StatusForbidden},
		{"mallory resuming alice's stream", id, "Authorization: Bearer mallory\r\nLast-Event-ID: _0\r\n", http.StatusForbidden},
		{"mallory's GET of a session guessed", "GUESSEDGUESSEDGUESSEDGUESS", "Authorization: Bearer mallory\r\n", http.StatusNotFound},
	} {
		a := getRaw(t, addr, c.id, c.extra)
		if a.status != c.status || a.closeConn {
			t.Errorf("%s: %d, Connection: close %v; want %d on net/http's path", c.what, a.status, a.closeConn, c.status)
		}
		if g.live.streaming(ls) {
			t.Errorf("%s: alice's session has a stream", c.what)
		}
	}
	s := openRawStreamAs(t, addr, id, "Authorization: Bearer alice\r\n")
	if s.resp.StatusCode != http.StatusOK || !s.resp.Close {
		t.Errorf("alice's own stream: %s, Connection: close %v; want 200 taken over", s.resp.Status, s.resp.Close)
	}
	waitFor(t, "alice's stream", func() bool { return g.live.streaming(ls) })
}

// openRawStreamAs is openRawStream with the header lines extra.
func openRawStreamAs(t *testing.T, addr, id, extra string) *streamClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n%s\r\n", addr, id, v1125, extra)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the stream's answer: %v", err)
	}
	return &streamClient{conn: conn, resp: resp, body: bufio.NewReader(resp.Body)}
}

// TestStreamConnCloseSlowReader: a client resuming, on a stream taken
// over, an answer of 8 MB it did not read (Last-Event-ID of the answer's
// first event), and not reading the replay, keeps Gateway.Close waiting
// no longer than a client that stops reading on net/http's path: the
// write deadline Close sets reaches the taken-over connection, and the
// stream's goroutines end.
func TestStreamConnCloseSlowReader(t *testing.T) {
	big := mcp.NewServer(&mcp.Implementation{Name: "big"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	mcp.AddTool(big, &mcp.Tool{Name: "huge", Description: strings.Repeat("d", 8<<20)}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	g, addr := startIdleGateway(t, nil, big)
	base := runtime.NumGoroutine()
	ctx := testCtx(t, 30*time.Second)
	c := &idleClient{addr: addr}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		if _, err := c.post(ctx, body, true); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(c.close)
	list, err := c.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, true)
	if err != nil || len(list) < 8<<20 {
		t.Fatalf("tools/list: %d bytes, %v", len(list), err)
	}
	prime := ""
	for line := range strings.SplitSeq(list, "\n") {
		if v, ok := strings.CutPrefix(line, "id: "); ok {
			prime = v
			break
		}
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\nLast-Event-ID: %s\r\n\r\n", addr, c.id, v1125, prime)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), nil)
	if err != nil || resp.StatusCode != http.StatusOK || !resp.Close {
		t.Fatalf("the replay's answer: %v %v (want 200 taken over)", resp, err)
	}
	time.Sleep(500 * time.Millisecond) // the replay fills the connection's buffers
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Close still waits 5s after it was called, for a client that does not read its stream")
		_ = conn.Close()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Close still waits after the client went away")
		}
	}
	c.close()
	_ = conn.Close()
	if n := settleGoroutines(base); n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestStreamConnFlood: a client sending without end on its stream's
// connection taken over (bytes of no request, which net/http's path
// would leave unread, the client held back by TCP) does not keep the
// gateway reading them: past Options.MaxRequestBytes its stream ends,
// and the session has no stream.
func TestStreamConnFlood(t *testing.T) {
	g, addr := startIdleGateway(t, &Options{TakeOverStreams: true, MaxRequestBytes: 64 << 10}, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	c, ls := openLiveIdle(t, g, addr)
	s := openTakenOver(t, g, addr, c.id, ls)
	junk := make([]byte, 64<<10)
	sent := 0
	for sent < 32<<20 {
		n, err := s.conn.Write(junk)
		sent += n
		if err != nil {
			break // the gateway closed the connection
		}
	}
	t.Logf("%d KiB sent", sent>>10)
	waitFor(t, "the flooded stream to end", func() bool { return !g.live.streaming(ls) })
}

// TestStreamConnTypeScriptClient: the TypeScript SDK's client (npm
// @modelcontextprotocol/sdk, under Node 22) gets a server's
// notifications/tools/list_changed on its standalone stream taken over as
// on net/http's, lists the same tools after it, and its stream ends with
// the session it ends. Each side is checked to have taken its path
// (Connection: close on the stream's answer as the client's fetch saw
// it, only when taken over).
func TestStreamConnTypeScriptClient(t *testing.T) {
	node := testenv.Node(t)
	sdk := filepath.Join(testenv.NPMDir(t), "node_modules", "@modelcontextprotocol", "sdk")
	tools := map[bool]string{}
	for _, take := range []bool{false, true} {
		g, addr := startIdleGateway(t, &Options{TakeOverStreams: take}, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
		cmd := exec.CommandContext(testCtx(t, 60*time.Second), node, "testdata/tsstream.mjs", sdk, "http://"+addr+"/mcp")
		cmd.Env = testenv.NodeEnv(node)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewScanner(stdout)
		var first struct{ Session string }
		if !out.Scan() || json.Unmarshal(out.Bytes(), &first) != nil || first.Session == "" {
			_ = cmd.Wait()
			t.Fatalf("tsstream printed %q: %s", out.Text(), stderr.String())
		}
		ls := g.live.get(first.Session, "")
		if ls == nil {
			t.Fatal("the client's session is not live")
		}
		waitFor(t, "the client's standalone stream", func() bool { return g.live.streaming(ls) })
		g.SetPolicy(denyTool("slow"))
		var last struct {
			Tools []string
			Gets  []struct {
				Status     int
				Connection *string
			}
		}
		if !out.Scan() || json.Unmarshal(out.Bytes(), &last) != nil {
			_ = cmd.Wait()
			t.Fatalf("tsstream printed %q: %s", out.Text(), stderr.String())
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("tsstream: %v\n%s", err, stderr.String())
		}
		if len(last.Gets) == 0 || last.Gets[0].Status != http.StatusOK {
			t.Fatalf("TakeOverStreams %v: the client's GETs: %+v", take, last.Gets)
		}
		if taken := last.Gets[0].Connection != nil && *last.Gets[0].Connection == "close"; taken != take {
			t.Fatalf("TakeOverStreams %v: the stream's answer has Connection: close %v, the other path taken", take, taken)
		}
		waitFor(t, "the stream to end with its session", func() bool { return !g.live.streaming(ls) })
		tools[take] = strings.Join(last.Tools, ",")
	}
	if tools[true] != tools[false] || strings.Contains(tools[true], "slow") {
		t.Errorf("the tools listed after list_changed: %q taken over, %q on net/http's", tools[true], tools[false])
	}
}

// TestStreamConnShutdownMany: Gateway.Shutdown with many sessions each
// holding its stream taken over ends every stream (each client reads its
// end) and returns, and the streams' goroutines end with it.
func TestStreamConnShutdownMany(t *testing.T) {
	const n = 40
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	base := runtime.NumGoroutine()
	ctx := testCtx(t, 60*time.Second)
	streams := make([]*streamClient, n)
	for i := range streams {
		c, err := openIdle(ctx, addr, holdNothing)
		if err != nil {
			t.Fatal(err)
		}
		if streams[i] = openRawStream(t, addr, c.id, ""); !streams[i].resp.Close {
			t.Fatalf("stream %d not taken over", i)
		}
	}
	waitFor(t, "the streams", func() bool {
		g.live.mu.Lock()
		defer g.live.mu.Unlock()
		open := 0
		for _, ls := range g.live.by {
			if ls.streams > 0 {
				open++
			}
		}
		return open >= n
	})
	shut := make(chan error, 1)
	go func() { shut <- g.Shutdown(ctx) }()
	for i, s := range streams {
		for {
			if _, _, err := s.event(); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("stream %d still open after Shutdown: %v", i, err)
				}
				break
			}
		}
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	for _, s := range streams {
		_ = s.conn.Close()
	}
	if got := settleGoroutines(base); got > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Shutdown, %d before:\n%s", got, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestStreamConnHTTP10: an HTTP/1.0 client's GET of its session's stream
// is taken over and answered as HTTP/1.1 allows (a body ending with the
// connection), carrying the session's events.
func TestStreamConnHTTP10(t *testing.T) {
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	c, ls := openLiveIdle(t, g, addr)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET /mcp HTTP/1.0\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n\r\n", addr, c.id, v1125)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !resp.Close || resp.ContentLength != -1 || len(resp.TransferEncoding) > 0 {
		t.Fatalf("the stream's answer to HTTP/1.0: %s, close %v, length %d, %v", resp.Status, resp.Close, resp.ContentLength, resp.TransferEncoding)
	}
	s := &streamClient{conn: conn, resp: resp, body: bufio.NewReader(resp.Body)}
	waitFor(t, "the stream", func() bool { return g.live.streaming(ls) })
	g.SetPolicy(denyTool("slow"))
	s.eventOf(t, "notifications/tools/list_changed")
}

// opaqueWriter is a middleware's ResponseWriter that lets nothing
// through but the ResponseWriter's own methods (no Unwrap).
type opaqueWriter struct{ w http.ResponseWriter }

func (o opaqueWriter) Header() http.Header         { return o.w.Header() }
func (o opaqueWriter) Write(p []byte) (int, error) { return o.w.Write(p) }
func (o opaqueWriter) WriteHeader(code int)        { o.w.WriteHeader(code) }
func (o opaqueWriter) Flush()                      { http.NewResponseController(o.w).Flush() }

// TestStreamConnOpaqueMiddleware: behind a middleware whose
// ResponseWriter does not unwrap to net/http's, a session's stream is
// not taken over (the connection cannot be) and is served on net/http's
// path, carrying its events.
func TestStreamConnOpaqueMiddleware(t *testing.T) {
	g, _ := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	addr := serveIdle(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.ServeHTTP(opaqueWriter{w}, r) }))
	c, ls := openLiveIdle(t, g, addr)
	s := openRawStream(t, addr, c.id, "")
	if s.resp.StatusCode != http.StatusOK || s.resp.Close {
		t.Fatalf("the stream behind an opaque writer: %s, Connection: close %v; want net/http's", s.resp.Status, s.resp.Close)
	}
	waitFor(t, "the stream", func() bool { return g.live.streaming(ls) })
	g.SetPolicy(denyTool("slow"))
	s.eventOf(t, "notifications/tools/list_changed")
}
