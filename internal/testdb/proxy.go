package testdb

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of a server, for tests of
// what a store does when the network misbehaves: it can stop forwarding
// (connections stay open, nothing passes either way), drop the server's
// replies (requests reach the server, answers never come back) and cut
// every connection. Closed when the test ends.
type Proxy struct {
	// Addr is the proxy's host:port; connect to it instead of the server.
	Addr string

	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu      sync.Mutex
	mode    ProxyMode
	drop    int           // replies still to drop (DropNext)
	dropped chan struct{} // closed and replaced when a reply is dropped
	changed chan struct{} // closed and replaced when mode changes
	conns   map[net.Conn]bool
	closed  bool
}

// ProxyMode is what a Proxy does with the bytes it is given.
type ProxyMode int

const (
	// Forward passes bytes both ways.
	Forward ProxyMode = iota
	// Stall passes nothing either way and leaves connections open: a
	// server that stopped answering, or a network that lost its route.
	// New connections are accepted and stall too.
	Stall
	// DropReplies passes requests to the server and throws its replies
	// away: the request is done, the client never learns it.
	DropReplies
)

// NewProxy starts a proxy to target (host:port).
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, changed: make(chan struct{}), dropped: make(chan struct{}), conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Set changes what the proxy does from now on, on open connections too.
func (p *Proxy) Set(m ProxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
}

// DropNext throws away the next n replies (each a read from the server,
// which for a request and its answer is one reply), then forwards again.
// It returns a channel closed when the first of them is dropped.
func (p *Proxy) DropNext(n int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = n
	return p.dropped
}

// Cut closes every open connection (both sides); new ones are accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !p.track(client, server) {
			return
		}
		p.wg.Add(2)
		go p.pipe(client, server, false)
		go p.pipe(server, client, true)
	}
}

// track records a connection pair, unless the proxy is closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

// pipe copies from src to dst as the mode says; reply is the server to
// client direction. It closes both ends when either fails.
func (p *Proxy) pipe(src, dst net.Conn, reply bool) {
	defer p.wg.Done()
	defer func() {
		_ = src.Close()
		_ = dst.Close()
		p.mu.Lock()
		delete(p.conns, src)
		delete(p.conns, dst)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.pass(reply) {
			return
		}
		if n > 0 && p.deliver(reply) {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed connection: both ends close
		}
	}
}

// pass waits while the proxy stalls; it returns false when the proxy
// closed meanwhile.
func (p *Proxy) pass(bool) bool {
	for {
		p.mu.Lock()
		m, ch, closed := p.mode, p.changed, p.closed
		p.mu.Unlock()
		if closed {
			return false
		}
		if m != Stall {
			return true
		}
		<-ch
	}
}

// deliver reports whether bytes read in direction reply go on.
func (p *Proxy) deliver(reply bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !reply {
		return true
	}
	if p.drop > 0 {
		p.drop--
		close(p.dropped)
		p.dropped = make(chan struct{})
		return false
	}
	return p.mode != DropReplies
}
