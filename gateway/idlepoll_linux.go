package gateway

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// A parked connection waits for its client's next request. Waiting with
// a goroutine blocked in a Read costs that goroutine's stack, a few KiB
// per idle session; on Linux a connPoller waits for all of a listener's
// parked connections with one goroutine and an epoll instance of its own,
// and starts a connection's goroutine only once its client sends (or
// closes it, or its read deadline passes). The connection stays
// registered with the Go runtime's poller as well: the two watch the one
// socket apart, and the runtime's reads of it once it is handed back are
// as any other.

// connPoller watches parked connections for their next bytes.
type connPoller struct {
	epfd int
	wake [2]int // a pipe: a byte written to wake[1] ends loop

	mu     sync.Mutex
	next   uint64 // the key of the last connection added; 0 names the pipe
	conns  map[uint64]*pollEntry
	closed bool

	done chan struct{} // closed when loop returns
}

// pollEntry is a connection watched, and what is done once it is ready.
type pollEntry struct {
	rc    syscall.RawConn
	ready func()
	timer *time.Timer // its read deadline, if any
}

// newConnPoller returns a poller with its goroutine started, which close
// ends.
func newConnPoller() (*connPoller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	p := &connPoller{epfd: epfd, conns: make(map[uint64]*pollEntry), done: make(chan struct{})}
	if err := syscall.Pipe2(p.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		_ = syscall.Close(epfd)
		return nil, err
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p.wake[0], &ev); err != nil {
		p.closeFDs()
		return nil, err
	}
	go p.loop()
	return p, nil
}

// add watches conn until its client sends bytes or closes it, or
// deadline (if not zero) passes, then calls ready once, on the poller's
// goroutine (it must not block); it reports false when conn cannot be
// watched (not a socket of the runtime's, or the poller closed), and
// ready is then never called. remove(key) stops watching it.
func (p *connPoller) add(conn net.Conn, deadline time.Time, ready func()) (key uint64, ok bool) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	e := &pollEntry{rc: rc, ready: ready}
	// Under mu throughout: close closes the epoll descriptor only once
	// it has forgotten every connection, under mu, so that no epoll call
	// here or in take ever names a descriptor closed (or reused since).
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, false
	}
	p.next++
	key = p.next
	var cerr error
	err = rc.Control(func(fd uintptr) {
		ev := syscall.EpollEvent{
			Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT,
			Fd:     int32(uint32(key)),
			Pad:    int32(uint32(key >> 32)),
		}
		cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err != nil || cerr != nil {
		return 0, false
	}
	p.conns[key] = e
	if !deadline.IsZero() {
		e.timer = time.AfterFunc(time.Until(deadline), func() {
			if p.take(key) != nil {
				ready()
			}
		})
	}
	return key, true
}

// remove stops watching the connection added under key, if it is still
// watched; its ready is then never called.
func (p *connPoller) remove(key uint64) { p.take(key) }

// take removes the connection under key from the poller, its epoll
// registration and its timer, and returns its entry; nil when it was
// taken already.
func (p *connPoller) take(key uint64) *pollEntry {
	p.mu.Lock()
	e := p.conns[key]
	if e != nil {
		delete(p.conns, key)
		// Under Control the descriptor is the connection's: one closed
		// meanwhile has left epoll with its descriptor, and Control
		// fails. Under mu the epoll descriptor is open (add).
		_ = e.rc.Control(func(fd uintptr) {
			_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
		})
	}
	p.mu.Unlock()
	if e != nil && e.timer != nil {
		e.timer.Stop()
	}
	return e
}

// loop waits for the connections' events and calls their ready, until
// close writes to the pipe.
func (p *connPoller) loop() {
	defer close(p.done)
	events := make([]syscall.EpollEvent, 128)
	for {
		n, err := syscall.EpollWait(p.epfd, events, -1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			p.fail()
			return
		}
		for _, ev := range events[:n] {
			key := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if key == 0 {
				return
			}
			if e := p.take(key); e != nil {
				e.ready()
			}
		}
	}
}

// fail readies every connection watched: epoll failed (it does not, but
// for a bug), and each connection's goroutine waits for it instead.
func (p *connPoller) fail() {
	p.mu.Lock()
	p.closed = true
	keys := make([]uint64, 0, len(p.conns))
	for k := range p.conns {
		keys = append(keys, k)
	}
	p.mu.Unlock()
	for _, k := range keys {
		if e := p.take(k); e != nil {
			e.ready()
		}
	}
}

// close ends the poller's goroutine and forgets the connections it
// watches, without calling their ready: their owner closes them.
func (p *connPoller) close() {
	p.mu.Lock()
	p.closed = true
	for k, e := range p.conns {
		if e.timer != nil {
			e.timer.Stop()
		}
		delete(p.conns, k)
	}
	p.mu.Unlock()
	_, _ = syscall.Write(p.wake[1], []byte{0})
	<-p.done
	p.closeFDs()
}

func (p *connPoller) closeFDs() {
	_ = syscall.Close(p.wake[0])
	_ = syscall.Close(p.wake[1])
	_ = syscall.Close(p.epfd)
}
