package gateway

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestParkIdleHeldRequestLine: a client that pipelines the start of its
// next request, its request line whole, with the one before, then sends
// the rest of it after the grace: net/http holds the request line read
// from its buffer when it reads the connection for the header, and the
// connection must stay net/http's, or the request line is lost and the
// header is taken for a request.
func TestParkIdleHeldRequestLine(t *testing.T) {
	_, _, addr := parkedServer(t, nil)
	conn, br := dialParked(t, addr)
	for i := range 3 {
		if _, err := io.WriteString(conn, "GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\n"); err != nil {
			t.Fatal(err)
		}
		if got := readAnswer(t, br); !strings.HasPrefix(got, "GET /first ") {
			t.Fatalf("round %d, the first answer: %q", i, got)
		}
		time.Sleep(3 * idleGrace)
		if _, err := io.WriteString(conn, "Host: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if got := readAnswer(t, br); !strings.HasPrefix(got, "GET /second ") {
			t.Fatalf("round %d, the answer to the request whose line net/http held: %q", i, got)
		}
	}
}
