package gateway

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// A client keeps its session's keep-alive connection open between its
// requests, mostly idle. Idle in net/http, such a connection holds its
// goroutine, parked where it waits for the next request with the stack
// the last handler grew (8 KiB), and its 4 KiB read and write buffers:
// about 17 KiB per idle session. ParkIdleConnections takes an idle
// connection from net/http and parks it without buffers, watched on Linux
// by the listener's one poller of parked connections (connPoller, no
// goroutine each), elsewhere by a goroutine of its own that has only read
// a few bytes (a small stack), then hands it back to the http.Server,
// through the listener's Accept, when its client sends the next request.
//
// net/http has no call for that, so it is done with the hooks it has:
// srv.ConnState says when a connection of the listener's goes idle;
// net/http then sets the connection's idle read deadline and waits for
// the next request's first bytes. That Read, right after that deadline,
// with nothing of the request read, waits for the request for idleGrace,
// and if none came, ends the connection for net/http (io.EOF) having read
// nothing; net/http's Close of it then parks it instead of closing it. A
// Read that would find bytes net/http holds already unread (its read
// buffer not empty, a client that sent the next request early) is a Read
// as any other, and the connection stays net/http's: so is a Read after
// net/http set the next request's read deadline (it found the request's
// first bytes in its buffer and reads the rest of it), or one when
// net/http set no deadline since the connection went idle. The grace
// keeps a client's requests one after the other on net/http's
// connection: a request on a parked connection is answered about 60 µs
// later on loopback (a new connection's goroutine woken), nothing next
// to an idle time past the grace but a fifth of a request's round trip.

// idleGrace is how long a connection stays net/http's, idle, before it is
// parked.
const idleGrace = 50 * time.Millisecond

// ParkIdleConnections returns ln for srv.Serve, so that the keep-alive
// connections srv holds idle are parked out of net/http, with about
// 14 KiB less per connection; it sets srv.ConnState, calling the one srv
// had. A parked connection's next request is served as any other, on a
// connection the listener accepts again: srv's ConnState sees the
// connection end (http.StateClosed) when it is parked and a new net.Conn
// (its RemoteAddr the same) come when it is taken back, for which
// srv.ConnContext is called again. A parked connection is the
// listener's, not srv's: srv.Shutdown and srv.Close close it by closing
// the listener, srv.SetKeepAlivesEnabled(false) does not (its next
// request is answered, and the connection closed); the read deadline net/http set for srv.IdleTimeout (or
// ReadTimeout) applies while it is parked. Connections under TLS stay
// net/http's: those of a TLS listener ln (tls.NewListener), and those
// srv.ServeTLS serves (a tls.Conn around the listener's).
func ParkIdleConnections(srv *http.Server, ln net.Listener) net.Listener {
	l := &idleListener{
		Listener: ln,
		accepted: make(chan accepted),
		back:     make(chan *idleConn),
		done:     make(chan struct{}),
		parked:   make(map[net.Conn]struct{}),
	}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if ic, ok := c.(*idleConn); ok {
			ic.setIdle(s == http.StateIdle)
		}
		if prev != nil {
			prev(c, s)
		}
	}
	return l
}

// idleListener is ParkIdleConnections' listener.
type idleListener struct {
	net.Listener
	start    sync.Once
	accepted chan accepted  // from acceptLoop
	back     chan *idleConn // parked connections with a request coming
	done     chan struct{}  // closed by Close
	waiters  sync.WaitGroup // the parked connections' goroutines
	poller   lazyPoller     // watches parked connections (Linux); none: a goroutine each waits

	mu     sync.Mutex
	closed bool
	parked map[net.Conn]struct{}
}

// accepted is what the inner listener's Accept returned.
type accepted struct {
	conn net.Conn
	err  error
}

// Accept returns the next connection accepted by the inner listener or
// coming back from parking.
func (l *idleListener) Accept() (net.Conn, error) {
	l.start.Do(l.begin)
	select {
	case a := <-l.accepted:
		if a.err != nil {
			return nil, a.err
		}
		if _, ok := a.conn.(*tls.Conn); ok {
			// Served by net/http as a TLS connection only if it is a
			// *tls.Conn: its handshake, r.TLS, HTTP/2 by ALPN.
			return a.conn, nil
		}
		return &idleConn{Conn: a.conn, l: l}, nil
	case c := <-l.back:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// begin starts the listener's goroutines, at its first Accept: the inner
// listener's, and the poller's of parked connections where there is one.
func (l *idleListener) begin() {
	l.poller.get()
	go l.acceptLoop()
}

// acceptLoop calls the inner listener's Accept, one call for each taken
// by Accept, until the listener is closed.
func (l *idleListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		select {
		case l.accepted <- accepted{c, err}:
		case <-l.done:
			if c != nil {
				_ = c.Close()
			}
			return
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
	}
}

// Close closes the inner listener and every parked connection, and waits
// for the parked connections' goroutines to end.
func (l *idleListener) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.done)
		for c := range l.parked {
			_ = c.Close()
		}
		clear(l.parked)
	}
	l.mu.Unlock()
	l.poller.close()
	err := l.Listener.Close()
	l.waiters.Wait()
	return err
}

// park parks conn, net/http done with it, its read deadline net/http's
// idle deadline, and reports whether it did (not once the listener is
// closed). The poller, if any, watches it until its client sends or the
// deadline passes; a goroutine of its own then waits for the request's
// first bytes.
func (l *idleListener) park(conn net.Conn, deadline time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.parked[conn] = struct{}{}
	if p := l.poller.get(); p == nil {
		l.waiters.Go(func() { l.wait(conn) })
	} else if _, ok := p.add(conn, deadline, func() { l.ready(conn) }); !ok {
		l.waiters.Go(func() { l.wait(conn) })
	}
	return true
}

// ready starts the goroutine of conn, parked and watched by the poller,
// whose client sent bytes, closed it, or whose deadline passed.
func (l *idleListener) ready(conn net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return // Close closes it
	}
	l.waiters.Go(func() { l.wait(conn) })
}

// wait waits for conn's client to send the start of a request, and hands
// conn back to Accept with what it read, its read deadline lifted; it
// closes conn if the read fails (the client closed it, the idle deadline
// passed, the listener was closed).
func (l *idleListener) wait(conn net.Conn) {
	var p [16]byte
	// At least the 4 bytes net/http waits for, under the idle deadline,
	// before it reads a request.
	n, err := io.ReadAtLeast(conn, p[:], 4)
	l.mu.Lock()
	delete(l.parked, conn)
	l.mu.Unlock()
	if err == nil {
		// As net/http does once the next request's first 4 bytes
		// come: the idle deadline is lifted, and net/http sets the
		// request's own (ReadHeaderTimeout, ReadTimeout), if any.
		err = conn.SetReadDeadline(time.Time{})
	}
	if err != nil {
		_ = conn.Close()
		return
	}
	c := &idleConn{Conn: conn, l: l, unread: append([]byte(nil), p[:n]...)}
	select {
	case l.back <- c:
	case <-l.done:
		_ = conn.Close()
	}
}

// idleConn is a connection of an idleListener, served by net/http.
type idleConn struct {
	net.Conn
	l *idleListener

	mu       sync.Mutex
	unread   []byte    // read while parked, for net/http's first Reads
	full     int       // the length of net/http's first Read: its read buffer empty
	deadline time.Time // the read deadline net/http set
	idle     idleStep  // where net/http is in waiting for the next request
	detached bool      // ended for net/http by a Read while idle
	closed   bool
}

// idleStep is where net/http is in waiting, a connection idle, for its
// next request.
type idleStep int

const (
	notIdle      idleStep = iota // serving a request, or reading one
	idleState                    // http.StateIdle
	idleDeadline                 // then its idle read deadline set: the next Read waits for the request
)

// setIdle records whether net/http holds c idle.
func (c *idleConn) setIdle(idle bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idle = notIdle
	if idle {
		c.idle = idleState
	}
}

// setDeadlineLocked records t, the read deadline net/http set: the idle
// deadline after c went idle, or the next request's after that.
func (c *idleConn) setDeadlineLocked(t time.Time) {
	c.deadline = t
	switch c.idle {
	case idleState:
		c.idle = idleDeadline
	case idleDeadline:
		c.idle = notIdle
	}
}

// Read returns what was read while c was parked, then reads c; a Read
// while c is idle, right after net/http set its idle read deadline, with
// net/http's read buffer empty, that reads nothing
// for idleGrace ends c for net/http (io.EOF), to be parked when net/http
// closes it.
func (c *idleConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if c.full == 0 {
		c.full = len(p)
	}
	if len(c.unread) > 0 {
		n := copy(p, c.unread)
		if c.unread = c.unread[n:]; len(c.unread) == 0 {
			c.unread = nil
		}
		c.mu.Unlock()
		return n, nil
	}
	if c.detached {
		c.mu.Unlock()
		return 0, io.EOF
	}
	waiting := c.idle == idleDeadline && !c.closed && len(p) >= c.full
	c.idle = notIdle
	deadline := c.deadline
	c.mu.Unlock()
	if !waiting {
		return c.Conn.Read(p)
	}
	grace := time.Now().Add(idleGrace)
	if !deadline.IsZero() && !grace.Before(deadline) {
		return c.Conn.Read(p) // net/http's idle deadline comes first
	}
	if err := c.Conn.SetReadDeadline(grace); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if derr := c.Conn.SetReadDeadline(deadline); err == nil {
		err = derr
	}
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	c.detached = true
	return 0, io.EOF
}

// SetReadDeadline sets c's read deadline, and records it for Read.
func (c *idleConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.setDeadlineLocked(t)
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline sets c's read and write deadlines, and records the read
// deadline for Read.
func (c *idleConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.setDeadlineLocked(t)
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

// Write writes p to c, unless c was ended for net/http.
func (c *idleConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	detached := c.detached
	c.mu.Unlock()
	if detached {
		return 0, net.ErrClosed
	}
	return c.Conn.Write(p)
}

// CloseWrite shuts down the writing side of c, for net/http, which does
// so (when the connection has it) before closing a connection whose
// request it did not read whole.
func (c *idleConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom writes what r holds to c, with c's own ReadFrom if it has one
// (sendfile, splice), as net/http does for a response copied from a file.
func (c *idleConn) ReadFrom(r io.Reader) (int64, error) {
	c.mu.Lock()
	detached := c.detached
	c.mu.Unlock()
	if detached {
		return 0, net.ErrClosed
	}
	return io.Copy(c.Conn, r)
}

// Close closes c, or parks it if a Read ended it for net/http.
func (c *idleConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return net.ErrClosed
	}
	c.closed = true
	detached, deadline := c.detached, c.deadline
	c.mu.Unlock()
	if detached && c.l.park(c.Conn, deadline) {
		return nil
	}
	return c.Conn.Close()
}
