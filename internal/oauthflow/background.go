package oauthflow

import (
	"sync"
	"time"
)

// background runs the saves a Handler's token sources retry on their
// own: a token kept in memory because the store could not take it must
// reach the store even when the process gets no more requests for it
// (they go to other replicas, which would otherwise refresh the rotated
// refresh token). Close ends them.
type background struct {
	mu   sync.Mutex
	done chan struct{} // closed by close
	wg   sync.WaitGroup
}

func newBackground() *background { return &background{done: make(chan struct{})} }

// start runs f in a goroutine of its own; f returns when stop (the
// channel it is given) is closed, if not sooner.
func (b *background) start(f func(stop <-chan struct{})) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wg.Add(1)
	stop := b.done
	go func() {
		defer b.wg.Done()
		f(stop)
	}()
}

// close ends the running goroutines and waits for them. Later starts run
// until the next close.
func (b *background) close() {
	b.mu.Lock()
	close(b.done)
	b.done = make(chan struct{})
	b.mu.Unlock()
	b.wg.Wait()
}

// keepSaving makes sure a goroutine saves r.unsaved until the store has
// it (or a newer token) or the Handler is closed, trying again as backoff
// says. The caller holds r.mu.
func (r *sharedRefresher) keepSaving() {
	if r.bg == nil || r.saving || r.unsaved == nil {
		return
	}
	r.saving = true
	r.bg.start(r.saveLoop)
}

// saveLoop is keepSaving's goroutine. When stop is closed it tries once
// more (the process may be shutting down: its last chance) and returns.
func (r *sharedRefresher) saveLoop(stop <-chan struct{}) {
	for {
		r.mu.Lock()
		wait := time.Until(r.retryAt)
		r.mu.Unlock()
		t := time.NewTimer(max(wait, 0))
		last := false
		select {
		case <-stop:
			t.Stop()
			last = true
		case <-t.C:
		}
		r.mu.Lock()
		if r.unsaved != nil && (last || !time.Now().Before(r.retryAt)) {
			r.saveUnsaved()
		}
		if r.unsaved == nil || last {
			r.saving = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
	}
}
