package gateway

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// TestParkIdleGraceBoundary: requests sent about as the grace ends, on
// one connection, before it and after it, each answered once and as
// sent: no byte lost or read twice between net/http, the parked
// connection's goroutine and its next Accept.
func TestParkIdleGraceBoundary(t *testing.T) {
	_, l, addr := parkedServer(t, nil)
	conn, br := dialParked(t, addr)
	keptGet(t, conn, br, "/start")
	for i := range 60 {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		// From 40 ms to 60 ms after the answer, by steps of 1/3 ms.
		time.Sleep(idleGrace - 10*time.Millisecond + time.Duration(i)*time.Millisecond/3)
		path := fmt.Sprintf("/b%d", i)
		req := "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"
		if i%2 == 1 { // its first bytes apart
			if _, err := io.WriteString(conn, req[:2]); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
			req = req[2:]
		}
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		if got := readAnswer(t, br); !strings.HasPrefix(got, "GET "+path+" ") {
			t.Fatalf("request %d, its answer: %q", i, got)
		}
	}
	waitParked(t, l, 1)
}

// TestParkIdleHijacked: a connection a handler takes over (http.Hijacker),
// fresh or one that was parked and came back, is closed for real when
// its hijacker closes it (its client reads the end, it is not parked),
// and one that the hijacker keeps reads what its client sends whatever
// the time between (no grace for it).
func TestParkIdleHijacked(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hijack" {
			fmt.Fprint(w, "plain")
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nready\n")
		// Echo lines until "bye", reading the connection with a
		// large buffer as net/http does, idle between them.
		buf := make([]byte, 4096)
		for {
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := brw.Reader.Read(buf)
			if err != nil {
				return
			}
			if strings.Contains(string(buf[:n]), "bye") {
				return
			}
			_, _ = conn.Write(buf[:n])
		}
	})
	ln := ParkIdleConnections(srv, inner)
	l := ln.(*idleListener)
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close(); <-served }()
	for _, parkedFirst := range []bool{false, true} {
		conn, br := dialParked(t, inner.Addr().String())
		if parkedFirst {
			keptGet(t, conn, br, "/plain")
			waitParked(t, l, 1)
		}
		if _, err := io.WriteString(conn, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if line, err := br.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("the hijacker's first line: %q %v", line, err)
		}
		_ = resp
		for i := range 3 {
			time.Sleep(3 * idleGrace)
			msg := fmt.Sprintf("echo %d\n", i)
			if _, err := io.WriteString(conn, msg); err != nil {
				t.Fatal(err)
			}
			if line, err := br.ReadString('\n'); err != nil || line != msg {
				t.Fatalf("parked first %v: the echo %d after a pause: %q %v", parkedFirst, i, line, err)
			}
		}
		if n := parkedCount(l); n != 0 {
			t.Fatalf("parked first %v: %d parked connections with the hijacked one open", parkedFirst, n)
		}
		if _, err := io.WriteString(conn, "bye\n"); err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(br); err != nil || len(b) != 0 {
			t.Fatalf("parked first %v: the hijacked connection after its hijacker closed it: %q %v, want its end", parkedFirst, b, err)
		}
		if n := parkedCount(l); n != 0 {
			t.Fatalf("parked first %v: %d parked connections after the hijacked one closed", parkedFirst, n)
		}
	}
}

// TestParkIdleMaxHeaderBytes: a request on a connection that was parked
// is held to the server's MaxHeaderBytes, the bytes its parked goroutine
// read counted with the rest.
func TestParkIdleMaxHeaderBytes(t *testing.T) {
	_, l, addr := parkedServer(t, func(srv *http.Server) { srv.MaxHeaderBytes = 1 << 10 })
	conn, br := dialParked(t, addr)
	keptGet(t, conn, br, "/")
	waitParked(t, l, 1)
	// MaxHeaderBytes and net/http's 4096 bytes of slack over it: a
	// header past them is refused.
	big := "GET /big HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n"
	go func() { _, _ = io.WriteString(conn, big) }()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a header past MaxHeaderBytes after the connection was parked: %s", resp.Status)
	}
}

// TestParkIdleH2C: a server that serves HTTP/2 without TLS
// (http.Protocols' UnencryptedHTTP2) keeps its HTTP/2 connections: a
// client's requests after idle pauses are answered on the one
// connection.
func TestParkIdleH2C(t *testing.T) {
	_, l, addr := parkedServer(t, func(srv *http.Server) {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	})
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var first string
	for i := range 4 {
		resp, err := client.Get("http://" + addr + fmt.Sprintf("/h%d", i))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.ProtoMajor != 2 {
			t.Fatalf("request %d: %s %q %v", i, resp.Proto, b, err)
		}
		from := string(b[strings.Index(string(b), " from "):])
		if first == "" {
			first = from
		} else if from != first {
			t.Fatalf("request %d %s, on another connection than the first's %s", i, from, first)
		}
		time.Sleep(3 * idleGrace)
		if n := parkedCount(l); n != 0 {
			t.Fatalf("%d parked HTTP/2 connections", n)
		}
	}
}

// TestParkIdleTimeoutEndsAtRequest: with an IdleTimeout and no
// ReadHeaderTimeout (nor ReadTimeout), net/http lifts the idle deadline
// once the next request's first bytes come and reads its header without
// one: a request that starts before the idle deadline on a parked
// connection and ends after it is answered, as on net/http's own idle
// connection.
func TestParkIdleTimeoutEndsAtRequest(t *testing.T) {
	_, l, addr := parkedServer(t, func(srv *http.Server) {
		srv.ReadHeaderTimeout = 0
		srv.IdleTimeout = time.Second
	})
	conn, br := dialParked(t, addr)
	keptGet(t, conn, br, "/")
	waitParked(t, l, 1)
	time.Sleep(500 * time.Millisecond)
	if _, err := io.WriteString(conn, "GET /late HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // past the idle deadline
	if _, err := io.WriteString(conn, "Host: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if got := readAnswer(t, br); !strings.HasPrefix(got, "GET /late ") {
		t.Fatalf("the answer: %q", got)
	}
}

// TestParkIdleShutdownRace: the server's Shutdown as a parked
// connection's client sends its next request (the connection parked,
// being handed back, or back in net/http): Shutdown returns, the client
// reads an answer or the connection's end, and the goroutines of the
// listener and its connections all end.
func TestParkIdleShutdownRace(t *testing.T) {
	base := runtime.NumGoroutine()
	for i := range 40 {
		srv, ln, served, conn, br := parkedPathServer(t)
		waitParked(t, ln.(*idleListener), 1)
		sent := make(chan error, 1)
		go func() {
			time.Sleep(time.Duration(i%8) * 50 * time.Microsecond)
			_, err := io.WriteString(conn, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			sent <- err
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatalf("round %d: Shutdown: %v", i, err)
		}
		cancel()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("round %d: Serve: %v", i, err)
		}
		<-sent
		resp, err := http.ReadResponse(br, nil)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "/next" {
				t.Fatalf("round %d: an answer %q", i, b)
			}
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("round %d: reading the answer: %v, want an answer or the connection's end", i, err)
		}
		_ = conn.Close()
	}
	goroutinesBackTo(t, base)
}

// closeCounter counts the connections it accepted that were closed.
type closeCounter struct {
	net.Listener
	closed atomic.Int64
}

func (l *closeCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *closeCounter
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.closed.Add(1) })
	return c.Conn.Close()
}

// TestParkIdleStreamTakenOver: a session's standalone stream sent on a
// keep-alive connection that was parked is taken over from net/http
// (Options.TakeOverStreams) on it: the stream stays open through idle
// times past the grace (never parked: its events reach the client), and
// when the client goes, or the gateway closes, its connection is closed
// for real, not parked.
func TestParkIdleStreamTakenOver(t *testing.T) {
	for _, end := range []string{"client", "Gateway.Close"} {
		t.Run(end, func(t *testing.T) {
			g := startStreamGateway(t)
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			counter := &closeCounter{Listener: inner}
			srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
			ln := ParkIdleConnections(srv, counter)
			l := ln.(*idleListener)
			served := make(chan struct{})
			go func() { defer close(served); _ = srv.Serve(ln) }()
			t.Cleanup(func() { _ = srv.Close(); <-served })
			addr := inner.Addr().String()

			c, ls := openLiveIdle(t, g, addr)
			waitParked(t, l, 1) // the session's keep-alive connection
			closedBefore := counter.closed.Load()

			conn, br := dialParked(t, addr)
			if _, err := io.WriteString(conn, "GET /mcp HTTP/1.1\r\nHost: x\r\nMcp-Session-Id: NOSUCHSESSION\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.Close {
				t.Fatalf("a GET of no session: %s with Connection: close", resp.Status)
			}
			waitParked(t, l, 2)
			req := fmt.Sprintf("GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n\r\n", addr, c.id, v1125)
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || !resp.Close {
				t.Fatalf("the stream on a connection that was parked: %s, Connection: close %v, want taken over", resp.Status, resp.Close)
			}
			s := &streamClient{conn: conn, resp: resp, body: bufio.NewReader(resp.Body)}
			waitFor(t, "the session's stream", func() bool { return g.live.streaming(ls) })
			for i := range 3 {
				time.Sleep(3 * idleGrace)
				if n := parkedCount(l); n != 1 {
					t.Fatalf("%d parked connections with the stream open, want 1 (the session's keep-alive)", n)
				}
				if i%2 == 0 {
					g.SetPolicy(denyTool("slow"))
				} else {
					g.SetPolicy(nil)
				}
				s.eventOf(t, "notifications/tools/list_changed")
			}
			if counter.closed.Load() != closedBefore {
				t.Fatalf("%d connections closed with the stream open", counter.closed.Load()-closedBefore)
			}
			if end == "client" {
				_ = conn.Close()
				waitFor(t, "the session's stream to end with its connection", func() bool { return !g.live.streaming(ls) })
			} else {
				closeEndsStream(t, g, s)
			}
			// The stream's connection closed by the gateway, not parked.
			waitFor(t, "the stream's connection closed", func() bool { return counter.closed.Load() == closedBefore+1 })
			if n := parkedCount(l); n > 1 {
				t.Fatalf("%d parked connections after the stream ended", n)
			}
		})
	}
}

// openFDs is the number of the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestParkIdleMany: thousands of idle keep-alive connections parked hold
// no goroutine each on Linux (a goroutine each elsewhere), and no more; once their clients close them, and once
// a client has opened and dropped thousands more (some mid-request, some
// right after a request), the process is back to its goroutines and file
// descriptors.
func TestParkIdleMany(t *testing.T) {
	const n = 3000
	_, l, addr := parkedServer(t, nil)
	time.Sleep(10 * time.Millisecond)
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, conn)
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		readAnswer(t, bufio.NewReader(conn))
	}
	waitParked(t, l, n)
	// On Linux one goroutine watches them all (connPoller).
	if g, most := runtime.NumGoroutine()-baseG, n+n/100; runtime.GOOS == "linux" && g > n/100 {
		t.Errorf("%d goroutines more with %d connections parked, want none each", g, n)
	} else if g > most {
		t.Errorf("%d goroutines more with %d connections parked, want about one each", g, n)
	}
	for _, c := range conns {
		_ = c.Close()
	}
	conns = conns[:0]
	waitParked(t, l, 0)
	for i := range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		switch i % 3 {
		case 1:
			_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHo")
		case 2:
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err == nil {
				readAnswer(t, bufio.NewReader(conn))
			}
		}
		_ = conn.Close()
	}
	backToBase(t, baseG, baseFD)
}

// TestParkIdleTLSListener: a TLS listener given to ParkIdleConnections
// (tls.NewListener, as an ACME library's listener is) has its
// connections served by net/http as TLS connections, as without it: the
// handler sees the request's TLS state (r.TLS), HTTP/2 is negotiated
// when the listener offers it, and the connections stay net/http's.
func TestParkIdleTLSListener(t *testing.T) {
	certs := httptest.NewUnstartedServer(http.NotFoundHandler())
	certs.EnableHTTP2 = true
	certs.StartTLS()
	defer certs.Close()
	for _, h2 := range []bool{false, true} {
		inner, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg := certs.TLS.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		if h2 {
			cfg.NextProtos = []string{"h2", "http/1.1"}
		}
		srv := &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "%s TLS %v from %s", r.Proto, r.TLS != nil, r.RemoteAddr)
			}),
			ReadHeaderTimeout: 10 * time.Second,
		}
		ln := ParkIdleConnections(srv, tls.NewListener(inner, cfg))
		l := ln.(*idleListener)
		served := make(chan struct{})
		go func() { defer close(served); _ = srv.Serve(ln) }()
		client := certs.Client()
		client.Timeout = 10 * time.Second
		want := "HTTP/1.1 TLS true"
		if h2 {
			want = "HTTP/2.0 TLS true"
		}
		var first string
		for i := range 3 {
			resp, err := client.Get("https://" + inner.Addr().String() + "/")
			if err != nil {
				t.Fatalf("h2 %v, request %d: %v", h2, i, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), want+" ") {
				t.Fatalf("h2 %v, request %d: the handler saw %q, want %q", h2, i, b, want)
			}
			if first == "" {
				first = string(b)
			} else if string(b) != first {
				t.Fatalf("h2 %v, request %d: %q, on another connection than %q", h2, i, b, first)
			}
			time.Sleep(3 * idleGrace)
			if n := parkedCount(l); n != 0 {
				t.Fatalf("h2 %v: %d TLS connections parked", h2, n)
			}
		}
		client.CloseIdleConnections()
		_ = srv.Close()
		<-served
	}
}

// TestParkIdleServerHooks: what the server's hooks see of a connection
// parked and taken back: ConnState sees it end (StateClosed) when parked
// and a new net.Conn come (StateNew) when it is taken back, with the same
// RemoteAddr, which the requests on it carry too; ConnContext is called
// again for it then.
func TestParkIdleServerHooks(t *testing.T) {
	type seen struct {
		conn  net.Conn
		state http.ConnState
	}
	var (
		mu       sync.Mutex
		states   []seen
		contexts []string
	)
	_, l, addr := parkedServer(t, func(srv *http.Server) {
		srv.ConnState = func(c net.Conn, s http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			states = append(states, seen{c, s})
		}
		srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
			mu.Lock()
			defer mu.Unlock()
			contexts = append(contexts, c.RemoteAddr().String())
			return ctx
		}
	})
	conn, br := dialParked(t, addr)
	for i := range 3 {
		if got := keptGet(t, conn, br, "/"); got != "GET / from "+conn.LocalAddr().String() {
			t.Fatalf("request %d: %q", i, got)
		}
		waitParked(t, l, 1)
	}
	mu.Lock()
	defer mu.Unlock()
	var want []http.ConnState
	for range 3 {
		want = append(want, http.StateNew, http.StateActive, http.StateIdle, http.StateClosed)
	}
	var got []http.ConnState
	conns := map[net.Conn]bool{}
	for _, s := range states {
		got = append(got, s.state)
		conns[s.conn] = true
		if s.conn.RemoteAddr().String() != conn.LocalAddr().String() {
			t.Errorf("ConnState's conn from %s, want %s", s.conn.RemoteAddr(), conn.LocalAddr())
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(conns) != 3 {
		t.Errorf("ConnState saw %v on %d net.Conns, want %v on 3", got, len(conns), want)
	}
	if len(contexts) != 3 || contexts[0] != conn.LocalAddr().String() || contexts[2] != contexts[0] {
		t.Errorf("ConnContext's calls: %v", contexts)
	}
}

// TestParkIdleKeepAlivesOff: keep-alives turned off
// (SetKeepAlivesEnabled(false)) with a connection parked: the
// connection's next request is answered with Connection: close and the
// connection closed; and a client half-closing its parked connection
// after a request has the request answered.
func TestParkIdleKeepAlivesOff(t *testing.T) {
	srv, l, addr := parkedServer(t, nil)
	conn, br := dialParked(t, addr)
	keptGet(t, conn, br, "/")
	waitParked(t, l, 1)
	srv.SetKeepAlivesEnabled(false)
	if _, err := io.WriteString(conn, "GET /off HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !resp.Close || !strings.HasPrefix(string(b), "GET /off ") {
		t.Fatalf("with keep-alives off: %q, Connection: close %v", b, resp.Close)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the answer: %v, want the connection's end", err)
	}
	waitParked(t, l, 0)

	srv.SetKeepAlivesEnabled(true)
	conn, br = dialParked(t, addr)
	keptGet(t, conn, br, "/")
	waitParked(t, l, 1)
	if _, err := io.WriteString(conn, "GET /half HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got := readAnswer(t, br); !strings.HasPrefix(got, "GET /half ") {
		t.Fatalf("the answer to a request half-closed: %q", got)
	}
	waitParked(t, l, 0)
}

// TestParkIdleTypeScriptClient: the TypeScript SDK's client (Node's
// fetch, its keep-alive connections) through a gateway served as serve
// serves it (idle connections parked, streams taken over), idle past the
// grace before each call: each call is answered, with its own text.
func TestParkIdleTypeScriptClient(t *testing.T) {
	node := testenv.Node(t)
	sdk := filepath.Join(testenv.NPMDir(t), "node_modules", "@modelcontextprotocol", "sdk")
	_, addr := startIdleGateway(t, nil, testserver.New(testserver.Options{Name: "up", Era: testserver.Legacy}))
	const calls = 8
	cmd := exec.CommandContext(testCtx(t, 60*time.Second), node, "testdata/tsidle.mjs", sdk, "http://"+addr+"/mcp", fmt.Sprint(calls), "120")
	cmd.Env = testenv.NodeEnv(node)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tsidle: %v\n%s", err, stderr.String())
	}
	var got struct {
		Version string
		Echoes  []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("tsidle printed %q: %v", out, err)
	}
	if got.Version != "2025-11-25" || len(got.Echoes) != calls {
		t.Fatalf("tsidle: %+v", got)
	}
	for i, e := range got.Echoes {
		if !strings.Contains(e, fmt.Sprintf("call %d", i)) {
			t.Errorf("call %d: %q", i, e)
		}
	}
}

// TestParkIdleByteByByte: a request sent a byte at a time, the bytes
// less than the grace apart and more, on a connection gone idle: it is
// answered whole, and the connection parked after.
func TestParkIdleByteByByte(t *testing.T) {
	_, l, addr := parkedServer(t, nil)
	conn, br := dialParked(t, addr)
	keptGet(t, conn, br, "/")
	waitParked(t, l, 1)
	for _, gap := range []time.Duration{idleGrace * 3 / 5, idleGrace * 7 / 5} {
		keptGet(t, conn, br, "/")
		path := fmt.Sprintf("/g%d", gap.Milliseconds())
		for _, b := range []byte("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n") {
			time.Sleep(gap)
			if _, err := conn.Write([]byte{b}); err != nil {
				t.Fatal(err)
			}
		}
		if got := readAnswer(t, br); !strings.HasPrefix(got, "GET "+path+" ") {
			t.Fatalf("bytes %v apart: %q", gap, got)
		}
		waitParked(t, l, 1)
	}
}

// TestParkIdleTimeoutFewBytes: with an IdleTimeout and no
// ReadHeaderTimeout, a client that sends fewer than the 4 bytes net/http
// waits for before lifting its idle deadline, on a parked connection,
// has it closed at the idle deadline, as net/http closes its own idle
// connection: those bytes do not lift it.
func TestParkIdleTimeoutFewBytes(t *testing.T) {
	_, l, addr := parkedServer(t, func(srv *http.Server) {
		srv.ReadHeaderTimeout = 0
		srv.IdleTimeout = 500 * time.Millisecond
	})
	conn, br := dialParked(t, addr)
	keptGet(t, conn, br, "/")
	waitParked(t, l, 1)
	if _, err := io.WriteString(conn, "GE"); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(br); err != nil || len(b) != 0 {
		t.Fatalf("a connection that sent 2 bytes: %q %v, want it closed at the idle deadline", b, err)
	}
}

// TestParkIdleCloseAtGrace: the server's Shutdown or Close about as an
// idle connection's grace ends (net/http reading it, ending it for
// net/http, closing it to park it): Shutdown returns, the client reads
// the connection's end, and the goroutines of the listener and its
// connections all end.
func TestParkIdleCloseAtGrace(t *testing.T) {
	base := runtime.NumGoroutine()
	for i := range 40 {
		srv, _, served, conn, br := parkedPathServer(t)
		var err error
		time.Sleep(idleGrace - 5*time.Millisecond + time.Duration(i)*time.Millisecond/4)
		if i%2 == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = srv.Shutdown(ctx)
			cancel()
		} else {
			err = srv.Close()
		}
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("round %d: Serve: %v", i, err)
		}
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("round %d: the idle connection after the server's end: %v, want its end", i, err)
		}
		_ = conn.Close()
	}
	goroutinesBackTo(t, base)
}

// parkedPathServer serves, through ParkIdleConnections, an http.Server
// answering each request with its path, and returns it with its listener,
// the channel Serve's error comes on, and a connection to it (with a 10 s
// deadline and its reader) that made one request and is kept alive.
func parkedPathServer(t *testing.T) (srv *http.Server, ln net.Listener, served <-chan error, conn net.Conn, br *bufio.Reader) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Path) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ln = ParkIdleConnections(srv, inner)
	serving := make(chan error, 1)
	go func() { serving <- srv.Serve(ln) }()
	conn, err = net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	br = bufio.NewReader(conn)
	keptGet(t, conn, br, "/")
	return srv, ln, serving, conn, br
}

// goroutinesBackTo fails t, with every goroutine's stack, unless the
// process's goroutines come back to at most base (within settleGoroutines'
// bound).
func goroutinesBackTo(t *testing.T, base int) {
	t.Helper()
	if n := settleGoroutines(base); n > base {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// backToBase waits (10 s at the most) for the process to be back to at
// most baseG goroutines and baseFD open files, and fails the test, with
// every goroutine's stack, if it is not.
func backToBase(t *testing.T, baseG, baseFD int) {
	t.Helper()
	var g, fd int
	for range 1000 {
		if g, fd = runtime.NumGoroutine(), openFDs(t); g <= baseG && fd <= baseFD {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines and %d open files, %d and %d before:\n%s", g, fd, baseG, baseFD, buf[:runtime.Stack(buf, true)])
}

// startStreamGateway starts a gateway that takes its sessions' streams
// over (as serve does) in front of a handshake-era server; it is closed
// when the test ends.
func startStreamGateway(t *testing.T) *Gateway {
	t.Helper()
	upURL := testserver.StartStreamable(t, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}), testserver.Stateless()).URL
	g, err := New([]Server{{Name: "up", Target: upURL}}, &Options{TakeOverStreams: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	return g
}
