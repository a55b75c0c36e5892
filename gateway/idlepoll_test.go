package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestParkIdleChurn: many clients at once, each making requests on its
// keep-alive connection about as the grace ends (parked or not), as its
// idle deadline passes, pipelined, then half-closing it or dropping it,
// while others connect and drop connections (their descriptors reused at
// once by the next connections, parked or not): each answer is its own
// request's, on its own connection (no request handed to another
// client's connection), each request is answered or its connection
// ended (none left hanging), and the process is back to its goroutines
// and file descriptors.
func TestParkIdleChurn(t *testing.T) {
	_, l, addr := parkedServer(t, func(srv *http.Server) {
		// Its deadline passes about as some connections are parked.
		srv.IdleTimeout = idleGrace + 15*time.Millisecond
	})
	time.Sleep(10 * time.Millisecond)
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)
	const (
		workers = 64
		rounds  = 12
	)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			if err := churnWorker(addr, w, rounds); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	waitParked(t, l, 0)
	backToBase(t, baseG, baseFD)
}

// churnWorker plays one client of TestParkIdleChurn for rounds
// connections.
func churnWorker(addr string, w, rounds int) error {
	for r := range rounds {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		err = churnRound(conn, w, r)
		_ = conn.Close()
		if err != nil {
			return fmt.Errorf("round %d: %w", r, err)
		}
		// A connection opened and dropped at once: its descriptor is
		// the next one's.
		if c, err := net.Dial("tcp", addr); err == nil {
			if r%2 == 0 {
				_, _ = io.WriteString(c, "GET /dropped HTTP/1.1\r\nHo")
			}
			_ = c.Close()
		}
	}
	return nil
}

// churnRound makes the requests of one connection of churnWorker; a
// request whose connection ended before its answer (the idle deadline
// passed first) ends the round.
func churnRound(conn net.Conn, w, r int) error {
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	local := conn.LocalAddr().String()
	ask := func(path string) (ended bool, err error) {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
				return true, nil
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return false, fmt.Errorf("%s: no answer and the connection open", path)
			}
			return false, fmt.Errorf("%s: %w", path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		if want := "GET " + path + " from " + local; string(b) != want {
			return false, fmt.Errorf("answer %q, want %q", b, want)
		}
		return false, nil
	}
	send := func(s string) bool {
		_, err := io.WriteString(conn, s)
		return err == nil
	}
	req := func(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n" }
	first := fmt.Sprintf("/w%d/r%d/first", w, r)
	if !send(req(first)) {
		return errors.New("the first request not sent")
	}
	if ended, err := ask(first); err != nil || ended {
		return errors.Join(err, errors.New("the first request not answered"))
	}
	for i := range 4 {
		// From 40 ms to 70 ms: before the grace ends, as it ends, as
		// the idle deadline passes.
		time.Sleep(idleGrace - 10*time.Millisecond + time.Duration((w*7+r*5+i*11)%30)*time.Millisecond)
		a := fmt.Sprintf("/w%d/r%d/%d", w, r, i)
		switch (w + r + i) % 4 {
		case 0: // one request
			if !send(req(a)) {
				return nil
			}
			if ended, err := ask(a); ended || err != nil {
				return err
			}
		case 1: // two pipelined
			b := a + "b"
			if !send(req(a) + req(b)) {
				return nil
			}
			for _, p := range []string{a, b} {
				if ended, err := ask(p); ended || err != nil {
					return err
				}
			}
		case 2: // its first bytes, then the rest
			if !send(req(a)[:3]) {
				return nil
			}
			time.Sleep(time.Millisecond)
			if !send(req(a)[3:]) {
				return nil
			}
			if ended, err := ask(a); ended || err != nil {
				return err
			}
		case 3: // a request, and the client's side closed
			if !send(req(a)) {
				return nil
			}
			_ = conn.(*net.TCPConn).CloseWrite()
			if ended, err := ask(a); ended || err != nil {
				return err
			}
			return nil
		}
	}
	return nil
}

// TestStreamConnChurn: sessions' streams taken over, watched for their
// clients' end, while other clients drop theirs (some with a reset)
// and open them again at once, and connections are opened and dropped
// between (their descriptors reused at once by the next streams): each
// stream dropped ends, its session's stream freed, and none kept open
// ends (a client's end never taken for another's): each carries the
// server's next notification; Gateway.Close then ends them.
func TestStreamConnChurn(t *testing.T) {
	g, addr := startIdleGateway(t, nil, testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy}))
	const n = 24
	type held struct {
		c  *idleClient
		ls *liveSession
		s  *streamClient
	}
	sessions := make([]held, n)
	for i := range sessions {
		c, ls := openLiveIdle(t, g, addr)
		sessions[i] = held{c, ls, openTakenOver(t, g, addr, c.id, ls)}
	}
	streams := func(ls *liveSession) int {
		g.live.mu.Lock()
		defer g.live.mu.Unlock()
		return ls.streams
	}
	for r := range 8 {
		for i := range sessions {
			if (i+r)%3 != 0 {
				continue
			}
			h := &sessions[i]
			if i%2 == 0 {
				_ = h.s.conn.(*net.TCPConn).SetLinger(0) // a reset
			}
			_ = h.s.conn.Close()
			if c, err := net.Dial("tcp", addr); err == nil {
				_ = c.Close()
			}
			waitFor(t, fmt.Sprintf("round %d: session %d's stream to end with its connection", r, i), func() bool { return streams(h.ls) == 0 })
			h.s = openTakenOver(t, g, addr, h.c.id, h.ls)
		}
	}
	for i := range sessions {
		if got := streams(sessions[i].ls); got != 1 {
			t.Fatalf("session %d: %d streams, want 1", i, got)
		}
	}
	g.SetPolicy(denyTool("slow"))
	for i := range sessions {
		sessions[i].s.eventOf(t, "notifications/tools/list_changed")
	}
	closeEndsStream(t, g, sessions[0].s)
	for i := range sessions {
		_ = sessions[i].s.conn.Close()
		sessions[i].c.close()
	}
}

// TestParkIdleCloseWhileWaking: the server's Close or Shutdown as many
// parked connections' clients send their next requests, or drop their
// connections, at once (the poller readying them, their goroutines
// starting): it returns, each client reads
// an answer to its own request or its connection's end, and the process
// is back to its goroutines and file descriptors.
func TestParkIdleCloseWhileWaking(t *testing.T) {
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)
	for round := range 6 {
		inner, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{
			Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "%s from %s", r.URL.Path, r.RemoteAddr) }),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       10 * time.Second,
		}
		ln := ParkIdleConnections(srv, inner)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		const n = 150
		conns := make([]net.Conn, n)
		brs := make([]*bufio.Reader, n)
		for i := range conns {
			c, err := net.Dial("tcp", inner.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			conns[i], brs[i] = c, bufio.NewReader(c)
			if _, err := io.WriteString(c, "GET /first HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			readAnswer(t, brs[i])
		}
		waitParked(t, ln.(*idleListener), n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, c := range conns {
			wg.Go(func() {
				<-start
				if i%5 == 4 {
					_ = c.Close()
					return
				}
				_, _ = fmt.Fprintf(c, "GET /next%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
			})
		}
		close(start)
		time.Sleep(time.Duration(round) * 200 * time.Microsecond)
		if round%2 == 0 {
			err = srv.Close()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = srv.Shutdown(ctx)
			cancel()
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("round %d: Serve: %v", round, err)
		}
		wg.Wait()
		for i, c := range conns {
			if i%5 == 4 {
				continue
			}
			resp, err := http.ReadResponse(brs[i], nil)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
					t.Fatalf("round %d, client %d: %v, want an answer or the connection's end", round, i, err)
				}
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("/next%d from %s", i, c.LocalAddr()); string(b) != want {
				t.Fatalf("round %d, client %d: answer %q, want %q", round, i, b, want)
			}
			_ = c.Close()
		}
	}
	backToBase(t, baseG, baseFD)
}

// tagConn is a connection of tagListener: a struct, not a pointer, with
// a slice, so that it is a net.Conn whose values cannot be compared.
type tagConn struct {
	net.Conn
	tags []string
}

// tagListener returns its connections as tagConn values, as a
// listener of the embedder's may.
type tagListener struct{ net.Listener }

func (l tagListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tagConn{Conn: c, tags: []string{"tcp"}}, nil
}

// TestStreamConnUncomparableConn: a session's stream on a connection of
// a listener whose net.Conn values cannot be compared (a struct with a
// slice) is taken over and served as any other, and ends with its
// client.
func TestStreamConnUncomparableConn(t *testing.T) {
	g := startStreamGateway(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(tagListener{inner}) }()
	t.Cleanup(func() { _ = srv.Close(); <-served })
	addr := inner.Addr().String()
	c, ls := openLiveIdle(t, g, addr)
	s := openTakenOver(t, g, addr, c.id, ls)
	g.SetPolicy(denyTool("slow"))
	s.eventOf(t, "notifications/tools/list_changed")
	_ = s.conn.Close()
	waitFor(t, "the session's stream to end with its connection", func() bool { return !g.live.streaming(ls) })
}

// TestParkIdleListenerLifetimes: a listener closed before its first
// Accept, and one server serving two listeners, each with connections
// parked, then closed: Serve returns, the parked connections' clients
// read their end, and the process is back to its goroutines and file
// descriptors.
func TestParkIdleListenerLifetimes(t *testing.T) {
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 10 * time.Second}
	ln := ParkIdleConnections(srv, inner)
	_ = ln.Close()
	if err := srv.Serve(ln); err == nil {
		t.Fatal("Serve of a closed listener: no error")
	}

	srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Path) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	var lns [2]*idleListener
	served := make(chan error, 2)
	var conns []net.Conn
	for i := range lns { // srv.ConnState set before srv serves
		inner, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ParkIdleConnections(srv, inner).(*idleListener)
	}
	for i, l := range lns {
		go func() { served <- srv.Serve(l) }()
		for j := range 3 {
			conn, br := dialParked(t, l.Addr().String())
			if got := keptGet(t, conn, br, fmt.Sprintf("/%d/%d", i, j)); got != fmt.Sprintf("/%d/%d", i, j) {
				t.Fatalf("answer %q", got)
			}
			conns = append(conns, conn)
		}
	}
	waitParked(t, lns[0], 3)
	waitParked(t, lns[1], 3)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for range lns {
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Serve: %v", err)
		}
	}
	for _, c := range conns {
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("a parked connection after the server's Close: %v, want its end", err)
		}
		_ = c.Close()
	}
	backToBase(t, baseG, baseFD)
}
