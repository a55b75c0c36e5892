package gateway

import "sync"

// lazyPoller is a connPoller made at its first use, until closed.
type lazyPoller struct {
	mu     sync.Mutex
	p      *connPoller
	closed bool
}

// get returns the poller, made now if it was not; nil when there can be
// none (another system than Linux) or it is closed.
func (lp *lazyPoller) get() *connPoller {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.p == nil && !lp.closed {
		lp.p, _ = newConnPoller()
	}
	return lp.p
}

// close closes the poller, if one was made.
func (lp *lazyPoller) close() {
	lp.mu.Lock()
	p := lp.p
	lp.p, lp.closed = nil, true
	lp.mu.Unlock()
	if p != nil {
		p.close()
	}
}
