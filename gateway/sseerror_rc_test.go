package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestSSEErrorWriterResponseController: through the writer go-sdk's
// handler writes to, http.ResponseController reaches net/http's own
// writer, on a real server: deadlines, full duplex, flushing and
// hijacking work as without it.
func TestSSEErrorWriterResponseController(t *testing.T) {
	errs := make(chan error, 8)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(&sseErrorWriter{ResponseWriter: w})
		errs <- rc.SetReadDeadline(time.Now().Add(time.Minute))
		errs <- rc.SetWriteDeadline(time.Now().Add(time.Minute))
		errs <- rc.EnableFullDuplex()
		errs <- rc.Flush()
		conn, brw, err := rc.Hijack()
		errs <- err
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		_ = brw.Flush()
	}))
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The Flush above sent a 200 header of net/http's own, before the
	// hijack: what follows it is the hijacker's.
	_ = resp.Body.Close()
	for i, what := range []string{"SetReadDeadline", "SetWriteDeadline", "EnableFullDuplex", "Flush", "Hijack"} {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("%s (call %d): %v", what, i, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the handler did not report", what)
		}
	}
}
