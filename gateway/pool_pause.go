package gateway

import "time"

// After an extra connection fails to open, the pool opens none of the
// same key (connOf: the principal whose connection it is, "" for the
// connection of no one's) for minOpenBackoff, doubled with each failure
// in a row up to maxOpenBackoff. When the pause ends the calls waiting
// are woken (the pool's change), to open one again.
const (
	minOpenBackoff = time.Second
	maxOpenBackoff = time.Minute
)

// maxPauses bounds the keys the pool holds a pause for: past it, pauses
// that have ended are forgotten, and a new one is not kept when none
// has.
const maxPauses = 4096

// openPause holds back the opening of connections of one key.
type openPause struct {
	until time.Time
	d     time.Duration
	timer *time.Timer // wakes the waiting calls at until
}

// pausedLocked reports whether no connection of key may be opened at
// now; p.mu is held.
func (p *pool) pausedLocked(key string, now time.Time) bool {
	ps := p.pauses[key]
	return ps != nil && now.Before(ps.until)
}

// failedLocked records that a connection of key failed to open: none of
// key is opened for a while, twice as long as after the last failure in
// a row; p.mu is held.
func (p *pool) failedLocked(key string) {
	now := time.Now()
	ps := p.pauses[key]
	if ps == nil {
		if len(p.pauses) >= maxPauses {
			for k, o := range p.pauses {
				if !now.Before(o.until) {
					p.openedLocked(k)
				}
			}
			if len(p.pauses) >= maxPauses {
				return
			}
		}
		if p.pauses == nil {
			p.pauses = make(map[string]*openPause)
		}
		ps = &openPause{}
		p.pauses[key] = ps
	}
	ps.d = min(max(2*ps.d, minOpenBackoff), maxOpenBackoff)
	ps.until = now.Add(ps.d)
	if ps.timer != nil {
		ps.timer.Stop()
	}
	ps.timer = time.AfterFunc(ps.d, p.wake)
}

// openedLocked ends the pause of key, if any: a connection of key
// opened (or the pool closed); p.mu is held.
func (p *pool) openedLocked(key string) {
	if ps := p.pauses[key]; ps != nil {
		if ps.timer != nil {
			ps.timer.Stop()
		}
		delete(p.pauses, key)
	}
}

// wake lets the waiting calls try the pool again.
func (p *pool) wake() {
	p.mu.Lock()
	p.signalLocked()
	p.mu.Unlock()
}
