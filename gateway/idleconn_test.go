package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// parkedServer serves, on 127.0.0.1 with its idle connections parked, a
// handler answering each request with its method, its path and the
// client's address;
// setup may set the server's fields. It returns the server, its listener
// and its address.
func parkedServer(t *testing.T, setup func(*http.Server)) (*http.Server, *idleListener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			fmt.Fprintf(w, "%s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if setup != nil {
		setup(srv)
	}
	ln := ParkIdleConnections(srv, inner)
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-served })
	return srv, ln.(*idleListener), inner.Addr().String()
}

// parkedCount is the number of connections l holds parked.
func parkedCount(l *idleListener) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.parked)
}

// waitParked waits (for 10 seconds at the most) for l to hold n parked
// connections.
func waitParked(t *testing.T, l *idleListener, n int) {
	t.Helper()
	for range 1000 {
		if parkedCount(l) == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d parked connections, want %d", parkedCount(l), n)
}

// keptGet sends a GET of path on conn and returns the answer's body.
func keptGet(t *testing.T, conn net.Conn, br *bufio.Reader, path string) string {
	t.Helper()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	return readAnswer(t, br)
}

// readAnswer reads an answer from br and returns its body.
func readAnswer(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the answer: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dialParked dials addr with a deadline of 10 seconds on the connection.
func dialParked(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, bufio.NewReader(conn)
}

// TestParkIdleConnections: a keep-alive connection left idle is parked
// out of net/http, and the client's next requests on it are served on it
// (a request sent whole, and one sent a byte at a time), the connection
// parked again after each; the server's ConnState set before is still
// called.
func TestParkIdleConnections(t *testing.T) {
	var (
		mu     sync.Mutex
		states = map[http.ConnState]int{}
	)
	_, l, addr := parkedServer(t, func(srv *http.Server) {
		srv.ConnState = func(_ net.Conn, s http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			states[s]++
		}
	})
	conn, br := dialParked(t, addr)
	first := keptGet(t, conn, br, "/one")
	waitParked(t, l, 1)
	if got := keptGet(t, conn, br, "/two"); got != strings.Replace(first, "/one", "/two", 1) {
		t.Fatalf("the second answer on the connection: %q, want as %q", got, first)
	}
	waitParked(t, l, 1)
	for _, b := range []byte("GET /three HTTP/1.1\r\nHost: x\r\n\r\n") {
		if _, err := conn.Write([]byte{b}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if got := readAnswer(t, br); got != strings.Replace(first, "/one", "/three", 1) {
		t.Fatalf("the answer to a request sent a byte at a time: %q", got)
	}
	waitParked(t, l, 1)
	mu.Lock()
	defer mu.Unlock()
	if states[http.StateIdle] < 3 {
		t.Fatalf("the server's ConnState: %v, want StateIdle at least 3 times", states)
	}
}

// TestParkIdlePipelined: requests a client sends at once, the second in
// net/http's read buffer when the first is answered, are all answered,
// and a request that arrives in pieces on a busy connection too.
func TestParkIdlePipelined(t *testing.T) {
	_, l, addr := parkedServer(t, nil)
	conn, br := dialParked(t, addr)
	var reqs strings.Builder
	for i := range 20 {
		fmt.Fprintf(&reqs, "GET /p%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
	}
	if _, err := io.WriteString(conn, reqs.String()); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if got := readAnswer(t, br); !strings.HasPrefix(got, fmt.Sprintf("GET /p%d ", i)) {
			t.Fatalf("answer %d: %q", i, got)
		}
	}
	// The next request's first two bytes with the end of a request's
	// body: net/http holds them unread when it answers.
	if _, err := io.WriteString(conn, "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGE"); err != nil {
		t.Fatal(err)
	}
	if got := readAnswer(t, br); !strings.HasPrefix(got, "POST /body ") {
		t.Fatalf("the POST's answer: %q", got)
	}
	time.Sleep(2 * idleGrace)
	if _, err := io.WriteString(conn, "T /after HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if got := readAnswer(t, br); !strings.HasPrefix(got, "GET /after ") {
		t.Fatalf("the answer to the request net/http held the start of: %q", got)
	}
	waitParked(t, l, 1)
}

// TestParkIdleEnds: a parked connection ends when its client closes it,
// at the server's IdleTimeout, and with the server (Shutdown, Close),
// whose listener's Close waits for the parked connections' goroutines;
// a client that sends part of a request after its connection was parked
// meets the server's ReadHeaderTimeout as on any connection.
func TestParkIdleEnds(t *testing.T) {
	t.Run("client", func(t *testing.T) {
		_, l, addr := parkedServer(t, nil)
		conn, br := dialParked(t, addr)
		keptGet(t, conn, br, "/")
		waitParked(t, l, 1)
		_ = conn.Close()
		waitParked(t, l, 0)
	})
	t.Run("IdleTimeout", func(t *testing.T) {
		_, l, addr := parkedServer(t, func(srv *http.Server) { srv.IdleTimeout = 300 * time.Millisecond })
		conn, br := dialParked(t, addr)
		keptGet(t, conn, br, "/")
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("reading the idle connection: %v, want EOF (closed at the server's IdleTimeout)", err)
		}
		waitParked(t, l, 0)
	})
	t.Run("ReadHeaderTimeout", func(t *testing.T) {
		_, l, addr := parkedServer(t, func(srv *http.Server) { srv.ReadHeaderTimeout = 300 * time.Millisecond })
		conn, br := dialParked(t, addr)
		keptGet(t, conn, br, "/")
		waitParked(t, l, 1)
		if _, err := io.WriteString(conn, "GET /slow HTTP/1.1\r\n"); err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(br); err != nil || strings.Contains(string(b), "/slow") {
			t.Fatalf("a request whose header never ends: %q %v, want the connection closed", b, err)
		}
	})
	for _, how := range []string{"Shutdown", "Close"} {
		t.Run(how, func(t *testing.T) {
			srv, l, addr := parkedServer(t, nil)
			conn, br := dialParked(t, addr)
			keptGet(t, conn, br, "/")
			waitParked(t, l, 1)
			var err error
			if how == "Shutdown" {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err = srv.Shutdown(ctx)
			} else {
				err = srv.Close()
			}
			if err != nil {
				t.Fatalf("%s: %v", how, err)
			}
			if n := parkedCount(l); n != 0 {
				t.Fatalf("%d parked connections after %s", n, how)
			}
			if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
				t.Fatalf("reading the parked connection after %s: %v, want EOF", how, err)
			}
		})
	}
}
