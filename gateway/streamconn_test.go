package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestStreamConnHolds: an idle handshake-era session with its keep-alive
// connection and its standalone stream open (as a go-sdk client keeps
// them), in a gateway served as mcpadapter serve serves it, holds at most
// 13 KiB of heap in the gateway's process: the stream's connection is
// taken over, without net/http's buffers and the state of its request
// being served, and the idle keep-alive connection is parked out of
// net/http (ParkIdleConnections), without its 4 KiB read and write
// buffers (18.4–18.9 KiB of heap a session with both net/http's). Its
// goroutines: go-sdk's reader of the session's messages and the stream's,
// parked under go-sdk's handler with 4 KiB of stack; on Linux the parked
// connection and the stream's connection are watched by the pollers of
// the listener and the gateway (connPoller), with no goroutine each, and
// it holds at most 12 KiB of stacks (5.9–9.2 measured); elsewhere a goroutine
// each, which has only read a few bytes, and at most 14 KiB, where
// net/http's connection goroutine keeps the 8 KiB its last request grew
// (16.9–17.2 KiB of stacks a session then). Not the stacks under -race,
// whose frames are larger.
func TestStreamConnHolds(t *testing.T) {
	const n = 300
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	c := measureIdleSessions(t, addr, n, holdStream, func() int { return liveCount(g) })
	t.Logf("%d idle sessions, each with its standalone stream: %v", n, c)
	goroutines, stack := 4.05, 14<<10
	if runtime.GOOS == "linux" {
		goroutines, stack = 2.05, 12<<10
	}
	if c.goroutines > goroutines {
		t.Errorf("%.2f goroutines per idle session with its stream, want at most %.0f", c.goroutines, goroutines)
	}
	if c.heap > 13<<10 {
		t.Errorf("%.1f KiB of heap per idle session with its stream, want at most 13 KiB", c.heap/1024)
	}
	if c.stack > float64(stack) && !raceDetector {
		t.Errorf("%.1f KiB of goroutine stacks per idle session with its stream, want at most %d KiB", c.stack/1024, stack>>10)
	}
}

// streamClient is a stream (GET) of a session read raw.
type streamClient struct {
	conn net.Conn
	resp *http.Response
	body *bufio.Reader
}

// openRawStream sends a GET of session id on a connection of its own, with
// Last-Event-ID lastID if not empty, and reads the answer's header.
func openRawStream(t *testing.T, addr, id, lastID string) *streamClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := fmt.Sprintf("GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n", addr, id, v1125)
	if lastID != "" {
		req += "Last-Event-ID: " + lastID + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the stream's answer: %v", err)
	}
	return &streamClient{conn: conn, resp: resp, body: bufio.NewReader(resp.Body)}
}

// event reads the stream's next event (comments skipped) and returns its
// id and data; err at the stream's end.
func (s *streamClient) event() (id, data string, err error) {
	for {
		line, err := s.body.ReadString('\n')
		if err != nil {
			return id, data, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data != "" {
				return id, data, nil
			}
		case strings.HasPrefix(line, "id: "):
			id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			data += line[len("data: "):]
		}
	}
}

// eventOf reads the stream until an event whose data holds method and
// returns its id.
func (s *streamClient) eventOf(t *testing.T, method string) string {
	t.Helper()
	for {
		id, data, err := s.event()
		if err != nil {
			t.Fatalf("the stream ended before %s: %v", method, err)
		}
		if strings.Contains(data, `"`+method+`"`) {
			return id
		}
	}
}

// TestStreamConnServes: a session's standalone stream served on its
// connection taken over carries what go-sdk's handler writes on it (the
// answer's header, the server's notifications as events with ids), with
// what a client sends on the connection dropped; it ends when the client
// goes (the session then has no stream open), a client resuming it with
// Last-Event-ID gets the events it missed, and Gateway.Close ends it.
func TestStreamConnServes(t *testing.T) {
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	c, ls := openLiveIdle(t, g, addr)

	s := openRawStream(t, addr, c.id, "")
	if s.resp.StatusCode != http.StatusOK || !strings.HasPrefix(s.resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("the stream's answer: %s %v", s.resp.Status, s.resp.Header)
	}
	if !s.resp.Close {
		t.Errorf("the stream's answer does not close its connection (Connection: %q): not taken over", s.resp.Header.Get("Connection"))
	}
	waitFor(t, "the session's stream", func() bool { return g.live.streaming(ls) })
	// A client writing on its stream's connection: a request pipelined
	// and bytes of no request, both dropped.
	if _, err := io.WriteString(s.conn, "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff garbage"); err != nil {
		t.Fatal(err)
	}
	g.SetPolicy(denyTool("slow"))
	first := s.eventOf(t, "notifications/tools/list_changed")
	if first == "" {
		t.Fatal("an event without an id: the stream cannot be resumed")
	}

	// The client goes: the session has no stream open.
	_ = s.conn.Close()
	waitFor(t, "the session's stream to end with its connection", func() bool { return !g.live.streaming(ls) })

	// An event while no stream is open, replayed to the client resuming.
	g.SetPolicy(nil)
	r := openRawStream(t, addr, c.id, first)
	if r.resp.StatusCode != http.StatusOK {
		t.Fatalf("resuming the stream: %s", r.resp.Status)
	}
	if id := r.eventOf(t, "notifications/tools/list_changed"); id == "" || id == first {
		t.Errorf("the event replayed has id %q (the one before: %q)", id, first)
	}
	waitFor(t, "the resumed stream", func() bool { return g.live.streaming(ls) })

	// Gateway.Close ends the stream: the client reads its end.
	closeEndsStream(t, g, r)
}

// TestStreamConnNotTaken: a GET naming no live session of its principal
// is answered by go-sdk's handler on net/http's connection as before
// (404, the connection kept alive).
func TestStreamConnNotTaken(t *testing.T) {
	_, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	s := openRawStream(t, addr, "NOSUCHSESSION", "")
	if s.resp.StatusCode != http.StatusNotFound || s.resp.Close {
		t.Errorf("a GET of no session: %s, Connection: close %v", s.resp.Status, s.resp.Close)
	}
}

// TestStreamConnOff: without Options.TakeOverStreams a session's stream
// stays net/http's (its connection kept alive), as it is for a program
// that embeds the gateway.
func TestStreamConnOff(t *testing.T) {
	g, addr := startIdleGateway(t, &Options{}, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	c, ls := openLiveIdle(t, g, addr)
	s := openRawStream(t, addr, c.id, "")
	if s.resp.StatusCode != http.StatusOK || s.resp.Close {
		t.Errorf("the stream's answer: %s, Connection: close %v, want 200 on a connection kept alive", s.resp.Status, s.resp.Close)
	}
	waitFor(t, "the session's stream", func() bool { return g.live.streaming(ls) })
}

// openLiveIdle opens an idle session of g at addr (openIdle, its
// connection kept alive) and returns it and its live record.
func openLiveIdle(t *testing.T, g *Gateway, addr string) (*idleClient, *liveSession) {
	t.Helper()
	c, err := openIdle(testCtx(t, 30*time.Second), addr, holdKeepAlive)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	ls := g.live.get(c.id, "")
	if ls == nil {
		t.Fatal("the session is not live")
	}
	return c, ls
}

// openTakenOver opens the standalone stream of session id (ls) of g at
// addr, fails the test unless its connection was taken over, and
// returns it once the session counts it.
func openTakenOver(t *testing.T, g *Gateway, addr, id string, ls *liveSession) *streamClient {
	t.Helper()
	s := openRawStream(t, addr, id, "")
	if !s.resp.Close {
		t.Fatal("the stream not taken over")
	}
	waitFor(t, "the session's stream", func() bool { return g.live.streaming(ls) })
	return s
}

// closeEndsStream closes g and checks that the client of stream s reads
// its end (not a read timeout) and that Close returns without error.
func closeEndsStream(t *testing.T, g *Gateway, s *streamClient) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	for {
		if _, _, err := s.event(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the stream still open after Gateway.Close: %v", err)
			}
			break
		}
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
}
