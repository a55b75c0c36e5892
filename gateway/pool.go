package gateway

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handshake-era server's questions are attributed by the calls in
// flight on the connection they came on (lane.go), so one connection
// runs the calls of one client that can be asked at a time. The pool of a
// server holds its extra connections: a call that may not start on the
// shared connection beside the calls in flight there runs on an extra
// connection where it may, one opened for it when the pool has room
// (Options.MaxExtraConnections). Each extra connection has its own
// client (for a stdio server, its own process) and its own lane, so a
// question on it goes to the calls in flight on it only. An extra
// connection idle for Options' extraIdle is closed; all are closed with
// the server. After a connection fails to open (a server that lets one
// process run, or hangs its handshake) the pool opens no other for a
// while (minOpenBackoff, doubling), and calls wait meanwhile; then the
// waiting calls try again (pool_pause.go). Over HTTP, for a server whose
// credential is per principal, that pause holds back that principal's
// connections only: a server that refuses one principal's token
// refuses no one else.
//
// An extra connection is made as the shared one is (the same settings,
// credentials and handlers), with no cap of its own on calls in flight:
// the server's cap (callSlots) counts the tool calls on all its
// connections, tasks' calls included. Tasks' calls and subscriptions stay
// on the shared connection (a task or a subscription lives in its
// session).

// conn is one extra connection of a server's pool.
type conn struct {
	client *mcpadapter.Client
	lane   *lane
	idle   *time.Timer // closes the connection once idle; nil while never idle
	// dialed is closed once the connection is made or failed (failed,
	// set before); until then calls that enter its lane wait for it.
	dialed chan struct{}
	failed bool
	// gone (p.mu) is set when the connection leaves the pool: its client
	// is closed, and closed again when its last call leaves (a call that
	// ran on it after made it connect anew).
	gone bool

	// ready makes its sessions ready (pool.prepare), once each.
	ready *readied
}

type pool struct {
	max  int
	wait time.Duration // how long a connection stays open idle
	// open makes the client of a new extra connection, whose server
	// requests go through l.
	open func(l *lane) (*mcpadapter.Client, error)
	// prepare readies a new session of an extra connection (it asks the
	// server for every log message).
	prepare func(ctx context.Context, cs *mcp.ClientSession)

	mu     sync.Mutex
	conns  []*conn
	closed bool
	// change, once made (changed), is closed on the next change that
	// may let a waiting call in: a call leaving, a connection closing.
	change chan struct{}
	// pauses hold back the opening of connections after one failed to
	// open (pool_pause.go), by connection key.
	pauses map[string]*openPause
	wg     sync.WaitGroup // closings of idle connections under way
}

// enter records f in flight on a connection of the pool where it may start
// at once, opening one if none may take it and the pool has room, and
// returns it; nil when f must wait. leave must then be called with it.
// A connection being opened takes f once it is made; when it fails, f
// waits (nil), and no call ever runs on it.
func (p *pool) enter(ctx context.Context, f *flight) *conn {
	if p == nil || p.max <= 0 {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	for _, c := range p.conns {
		if c.lane.tryEnter(f) {
			p.mu.Unlock()
			select {
			case <-c.dialed:
				if !c.failed {
					p.ready(ctx, c)
					return c
				}
			case <-ctx.Done():
			}
			p.leave(c, f)
			return nil
		}
	}
	key := connOf(ctx) // the principal whose connection it would be
	if len(p.conns) >= p.max || p.pausedLocked(key, time.Now()) {
		p.mu.Unlock()
		return nil
	}
	c := &conn{lane: newLane(), dialed: make(chan struct{}), ready: &readied{prepare: p.prepare}}
	cl, err := p.open(c.lane)
	if err != nil {
		p.mu.Unlock()
		return nil
	}
	c.client = cl
	c.lane.tryEnter(f) // an empty lane admits any call
	p.conns = append(p.conns, c)
	p.mu.Unlock()
	_, err = cl.Connect(ctx)
	p.mu.Lock()
	switch {
	case err != nil && (ctx.Err() != nil || signInOf(err) != nil):
		// The caller's failure (its call ended, or its principal must
		// sign in), not the server's: no holding back for others.
		c.failed = true
		p.removeLocked(c)
	case err != nil:
		p.failedLocked(key)
		fallthrough
	case p.closed:
		c.failed = true
		p.removeLocked(c)
	default:
		p.openedLocked(key)
	}
	close(c.dialed)
	p.mu.Unlock()
	if c.failed {
		// f waits on the shared connection instead.
		p.leave(c, f)
		return nil
	}
	p.ready(ctx, c)
	return c
}

// changed returns a channel closed on the pool's next change that may let
// a waiting call in (nil, never closed, without a pool).
func (p *pool) changed() <-chan struct{} {
	if p == nil || p.max <= 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.change == nil {
		p.change = make(chan struct{})
	}
	return p.change
}

// signalLocked closes the channel changed returned; p.mu is held.
func (p *pool) signalLocked() {
	if p.change != nil {
		close(p.change)
		p.change = nil
	}
}

// removeLocked takes c out of the pool; p.mu is held. Its client is
// closed by whoever removes it, and again when its last call leaves.
func (p *pool) removeLocked(c *conn) {
	p.conns = slices.DeleteFunc(p.conns, func(d *conn) bool { return d == c })
	c.gone = true
	p.signalLocked()
	if c.idle != nil {
		c.idle.Stop()
	}
}

// ready readies c's session that ctx's requests use, once per session:
// the client makes a new one when the server lost the last (a stdio
// process that exited), and one per principal over HTTP for a server
// whose credential is per principal.
func (p *pool) ready(ctx context.Context, c *conn) {
	c.ready.ready(ctx, c.client)
}

// leave ends f, in flight on c, and starts the connection's idle time
// if it has no other call. The last call to leave a connection taken out
// of the pool closes its client (again).
func (p *pool) leave(c *conn, f *flight) {
	p.mu.Lock()
	c.lane.leave(f)
	p.signalLocked()
	if c.gone {
		last := c.lane.idle()
		p.mu.Unlock()
		if last {
			_ = c.client.Close()
		}
		return
	}
	defer p.mu.Unlock()
	if !c.lane.idle() {
		return
	}
	if c.idle == nil {
		c.idle = time.AfterFunc(p.wait, func() { p.closeIdle(c) })
	} else {
		c.idle.Reset(p.wait)
	}
}

// closeIdle closes c if it is still idle.
func (p *pool) closeIdle(c *conn) {
	p.mu.Lock()
	if p.closed || c.gone || !c.lane.idle() {
		p.mu.Unlock()
		return
	}
	p.removeLocked(c)
	p.wg.Add(1) // close waits for it
	p.mu.Unlock()
	defer p.wg.Done()
	_ = c.client.Close()
}

// size returns how many extra connections are open.
func (p *pool) size() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// close closes every extra connection (stopping their processes), for
// good, and waits for those being closed as idle.
func (p *pool) close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	conns := slices.Clone(p.conns)
	for _, c := range conns {
		p.removeLocked(c)
	}
	for key := range p.pauses {
		p.openedLocked(key) // its timer stopped
	}
	p.mu.Unlock()
	var errs []error
	for _, c := range conns {
		if err := c.client.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
