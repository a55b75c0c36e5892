package gateway

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"
)

// A session's GET (its standalone stream, or a stream resumed with
// Last-Event-ID) is open as long as the session is, and mostly idle: a
// client keeps one per session. Served as net/http serves a request, it
// holds net/http's connection goroutine for as long, parked under the
// handler (8 KiB of stack), the connection's 4 KiB read and write
// buffers, the response's 2 KiB buffer and a background reader of the
// connection, about 27 KiB a stream. So the gateway takes the
// connection over (http.Hijacker) and serves the request on it itself,
// with go-sdk's handler as before, from a goroutine of its own: the
// handler writes to a streamConn, an http.ResponseWriter that writes the
// response on the connection unbuffered (each of go-sdk's events is one
// Write) and ends it by closing the connection (Connection: close); a
// goroutine reading the connection cancels the request's context when
// the client goes, as net/http's background reader does. Gateway.Close
// reaches it as it reaches any answer being written: go-sdk's handler
// returns when its session closes, and the write deadline of the answer
// writers is set on the connection.
//
// A request takes that path only when Options.TakeOverStreams is set,
// its connection can be taken over (HTTP/1.x, a ResponseWriter that
// unwraps to net/http's), it has no body, and it names a live session of
// the principal, not at 2026-07-28; any other goes as before. The two
// goroutines of a stream are the gateway's (streams): Gateway.Close
// waits for their end, which closing the session brings. Such a stream
// is no longer the http.Server's: Server.Shutdown does not wait for it,
// Server.Close does not close it and the server's WriteTimeout does not
// apply to it; it ends with its session (Gateway.Close,
// Gateway.Shutdown, the session's end) or its client.

// serveStreamConn serves r, a GET of a live session, on its connection
// taken over, and reports whether it did: when false, r and w are as
// they were.
func (g *Gateway) serveStreamConn(w http.ResponseWriter, r *http.Request) bool {
	if !g.opts.TakeOverStreams {
		return false
	}
	if _, ok := w.(*streamConn); ok || r.Method != http.MethodGet || r.ProtoMajor != 1 {
		return false
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" || g.shared != nil || r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= modernVersion {
		return false
	}
	if g.live.get(id, principalOf(r)) == nil {
		return false
	}
	// What a middleware around the gateway put in the header (a DPoP
	// nonce, say) goes out with the answer, as on net/http's path.
	header := w.Header().Clone()
	if header == nil {
		header = make(http.Header)
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	sc := &streamConn{conn: conn, header: header}
	unwatch := g.watchStreamConn(conn, brw.Reader, cancel)
	g.streams.Go(func() {
		defer func() {
			// As net/http does for a handler's panic: logged, and the
			// connection closed; the process goes on.
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				g.log.Error("a panic serving a session's stream", "panic", p, "stack", string(debug.Stack()))
			}
			cancel()
			unwatch()
			_ = conn.Close()
		}()
		g.serveStream(sc, r.WithContext(ctx), id)
		sc.finish()
	})
	return true
}

// serveStream serves r, a GET of session id on its connection taken over
// (w), as ServeHTTP serves a GET of a session once it checked it: it
// records the answer being written (Gateway.Close), the request (for
// Options.Telemetry) and the session's stream (not idle while open), and
// hands r to go-sdk's handler. It does so itself, not through ServeHTTP,
// to keep the goroutine's stack, parked under go-sdk's handler for as long
// as the stream is open, at its smallest: ServeHTTP's frame is 0.6 KiB,
// which with go-sdk's own frames and the write of the answer's header
// would grow it to 8 KiB.
func (g *Gateway) serveStream(w http.ResponseWriter, r *http.Request, id string) {
	defer g.writes.add(w)()
	defer g.withHTTPContext(r)()
	defer g.live.stream(id, principalOf(r))()
	g.stateful.ServeHTTP(w, r)
}

// watchStreamConn watches conn, a stream's connection taken over, and
// br, the reader of it net/http hands over with it, for its client
// closing it (watchConn, then gone): with a goroutine of its own once the
// client sends or closes it, until then with the poller of the gateway's
// streams (Linux) where it can (nothing the client sent after the
// request left in br). It returns what the stream's goroutine calls when
// the stream ends, before it closes conn.
func (g *Gateway) watchStreamConn(conn net.Conn, br *bufio.Reader, gone context.CancelFunc) (unwatch func()) {
	var rd io.Reader = conn
	if br.Buffered() > 0 {
		rd = br // bytes the client sent after the request
	}
	watch := func() { watchConn(rd, g.opts.maxRequestBytes(), gone) }
	p := g.streamPoll.get()
	if p == nil || br.Buffered() > 0 {
		g.streams.Go(watch)
		return func() {}
	}
	if ic, isIdle := conn.(*idleConn); isIdle {
		// A connection of ParkIdleConnections' listener: the socket
		// under it, once nothing it read is left for the stream's reads.
		ic.mu.Lock()
		unread := len(ic.unread)
		ic.mu.Unlock()
		if unread > 0 {
			g.streams.Go(watch)
			return func() {}
		}
		conn = ic.Conn
	}
	var mu sync.Mutex
	ended := false
	key, ok := p.add(conn, time.Time{}, func() {
		// Until ended is set the stream's goroutine runs, counted in
		// g.streams: the group is not at zero, and Close's wait for it
		// waits for this goroutine too.
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			g.streams.Go(watch)
		}
	})
	if !ok {
		g.streams.Go(watch)
		return func() {}
	}
	return func() {
		p.remove(key)
		mu.Lock()
		ended = true
		mu.Unlock()
	}
}

// watchConn reads rd, the client's side of a stream's connection, until
// it fails (the client closed it, or the gateway did), then calls gone.
// What the client sends on it is dropped, read 4 KiB at a time once it
// sent anything (a small buffer while it sends nothing keeps the
// goroutine's stack small; a client sending without end would otherwise
// cost a read for every 16 bytes), up to limit bytes: a client sending
// more (net/http's path would leave it unread, the client held back by
// TCP) is gone too, so that the gateway does not read without end.
func watchConn(rd io.Reader, limit int64, gone context.CancelFunc) {
	var small [16]byte
	p := small[:]
	var sent int64
	for {
		n, err := rd.Read(p)
		sent += int64(n)
		if err != nil || sent > limit {
			gone()
			return
		}
		if n > 0 && len(p) == len(small) {
			p = make([]byte, 4<<10)
		}
	}
}

// streamConn is the http.ResponseWriter of a request served on its
// connection taken over: the status line and header go out at the first
// Write or Flush (Connection: close; Content-Type sniffed as net/http
// does when the handler set none), the body unbuffered, and it ends when
// the connection is closed. It is safe for concurrent use.
type streamConn struct {
	conn   net.Conn
	header http.Header

	mu    sync.Mutex
	wrote bool
	code  int
	err   error // the first write's that failed
}

// Header returns the header to be written.
func (s *streamConn) Header() http.Header { return s.header }

// WriteHeader records the status to write (1xx codes are ignored, as no
// handler of the gateway sends them).
func (s *streamConn) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote || s.code != 0 || code < 200 {
		return
	}
	s.code = code
}

// writeHeaderLocked writes the status line and header, once; p is the
// start of the body, for the sniffing of its Content-Type.
func (s *streamConn) writeHeaderLocked(p []byte) {
	if s.wrote {
		return
	}
	s.wrote = true
	code := s.code
	if code == 0 {
		code = http.StatusOK
	}
	h := s.header
	h.Del("Transfer-Encoding")
	h.Set("Connection", "close")
	if _, ok := h["Content-Type"]; !ok && len(p) > 0 && code != http.StatusNoContent && code != http.StatusNotModified {
		h.Set("Content-Type", http.DetectContentType(p))
	}
	if _, ok := h["Date"]; !ok {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", code, http.StatusText(code))
	_ = h.Write(&b) // a bytes.Buffer does not fail
	b.WriteString("\r\n")
	if _, err := s.conn.Write(b.Bytes()); err != nil {
		s.err = err
	}
}

// finish writes the header of a handler that returned without writing
// anything (go-sdk's, replaying a stream that has ended with nothing
// after the client's Last-Event-ID), with an empty body, as net/http
// does: the client gets an answer, not a connection closed without one.
func (s *streamConn) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote {
		return
	}
	if code := s.code; code != http.StatusNoContent && code != http.StatusNotModified {
		s.header.Set("Content-Length", "0")
	}
	s.writeHeaderLocked(nil)
}

// Write writes p as the body, the header first if not yet written.
func (s *streamConn) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeHeaderLocked(p)
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.conn.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// FlushError writes the header if not yet written (the body is written
// unbuffered) and returns the error of the first write that failed.
func (s *streamConn) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeHeaderLocked(nil)
	return s.err
}

// Flush is FlushError without its error.
func (s *streamConn) Flush() { _ = s.FlushError() }

// SetWriteDeadline sets the connection's write deadline
// (http.ResponseController).
func (s *streamConn) SetWriteDeadline(t time.Time) error { return s.conn.SetWriteDeadline(t) }
