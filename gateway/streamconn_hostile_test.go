package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
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
