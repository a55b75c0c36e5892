package gateway

import (
	"net"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection: the
// accepted one (the server's) and the dialed one (the client's).
func tcpPair(t *testing.T, ln net.Listener) (server, client *net.TCPConn) {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

// connFD is the descriptor of c.
func connFD(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestConnPoller: a connection added to the poller is readied once, and
// only it: bytes its client sent before it was added (no wakeup lost), a
// client gone before, a client that half-closed, its deadline passed; a
// connection removed is never readied; a connection closed while
// watched, its descriptor at once another's that is added, never
// readies the other (events and removals go by key, not descriptor);
// none once the poller is closed, and its descriptors are closed.
func TestConnPoller(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p, err := newConnPoller()
	if err != nil {
		t.Fatal(err)
	}
	readied := make(chan string, 16)
	add := func(name string, c net.Conn, deadline time.Time) uint64 {
		t.Helper()
		key, ok := p.add(c, deadline, func() { readied <- name })
		if !ok {
			t.Fatalf("%s: not added", name)
		}
		return key
	}
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-readied:
			if got != want {
				t.Fatalf("%s readied, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not readied", want)
		}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case got := <-readied:
			t.Fatalf("%s readied (%s)", got, what)
		case <-time.After(50 * time.Millisecond):
		}
	}

	s, c := tcpPair(t, ln)
	_, _ = c.Write([]byte("GET / HTTP/1.1\r\n"))
	time.Sleep(10 * time.Millisecond) // the bytes there before
	add("sent-before", s, time.Time{})
	expect("sent-before")

	s, c = tcpPair(t, ln)
	_ = c.Close()
	time.Sleep(10 * time.Millisecond)
	add("gone-before", s, time.Time{})
	expect("gone-before")

	s, c = tcpPair(t, ln)
	add("half-closed", s, time.Time{})
	quiet("nothing sent")
	_ = c.CloseWrite()
	expect("half-closed")

	s, _ = tcpPair(t, ln)
	add("deadline", s, time.Now().Add(20*time.Millisecond))
	expect("deadline")
	s, _ = tcpPair(t, ln)
	add("deadline-past", s, time.Now().Add(-time.Second))
	expect("deadline-past")

	s, c = tcpPair(t, ln)
	p.remove(add("removed", s, time.Now().Add(30*time.Millisecond)))
	_, _ = c.Write([]byte("x"))
	quiet("removed: bytes sent, deadline passed")

	// Descriptors reused: each closed while watched, the next
	// connection given its descriptor and added.
	reused := 0
	for range 200 {
		a, _ := tcpPair(t, ln)
		keyA, ok := p.add(a, time.Time{}, func() { readied <- "closed" })
		if !ok {
			t.Fatal("not added")
		}
		fd := connFD(t, a)
		cb, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = a.Close()
		accepted, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		b := accepted.(*net.TCPConn)
		if connFD(t, b) == fd {
			reused++
		}
		keyB := add("reused", b, time.Time{})
		p.remove(keyA) // a removal of the closed one: not b's
		_, _ = cb.Write([]byte("x"))
		expect("reused")
		p.remove(keyB)
		_ = b.Close()
		_ = cb.Close()
	}
	t.Logf("%d of 200 descriptors reused at once", reused)
	if reused == 0 {
		t.Fatal("no descriptor reused: the test proves nothing")
	}
	quiet("the closed ones")

	s, c = tcpPair(t, ln)
	add("at-close", s, time.Now().Add(20*time.Millisecond))
	before := openFDs(t)
	p.close()
	if n := openFDs(t); n != before-3 {
		t.Errorf("%d open files after the poller's close, %d before: want its epoll and pipe closed", n, before)
	}
	_, _ = c.Write([]byte("x"))
	quiet("the poller closed")
	if _, ok := p.add(s, time.Time{}, func() { readied <- "after-close" }); ok {
		t.Fatal("added to a closed poller")
	}
}
