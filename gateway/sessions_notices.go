package gateway

import (
	"context"
	"errors"
	"slices"
	"time"
)

// A store that implements SessionNotifier carries notices of changed
// sessions among the replicas: the replica that hands a client's answer
// to another replica's question, or deletes a session, sends a notice
// with the session's id once the record is written; every replica
// subscribed gets it, and one with questions waiting in that session, or
// requests of it being handled (calls in flight, on either path, in the
// copy it holds), reads its record at once (takeHanded) instead of at its
// next poll. A notice is a hint, nothing more: it carries no record and
// no answer, and the replica reads the record from the store as a poll
// does. The polling stays as the fallback, every answerPoll while this
// replica is not subscribed (a store without notices, a subscription that
// failed or is being made again) and every answerPollNotified while it is
// (a notice lost, or a record that expired: no notice says so). A record
// read gone ends the copy held here, and its calls in flight with it
// (endCopy). A notice of a session this replica has neither questions
// waiting nor requests being handled in costs two map lookups; a replica
// with neither reads no record.

// SessionNotifier is implemented by a SessionStore that can tell the
// gateway's replicas that a session's record changed (Redis PUBLISH,
// PostgreSQL NOTIFY). With one, an answer a replica hands to another
// reaches its question as soon as the notice does; without one, at the
// next poll (every 250 ms). A notice carries a session id and nothing
// else; it may be lost, come twice, or come for a change already read.
type SessionNotifier interface {
	// NotifySession tells the replicas subscribed that the record of
	// session id changed; the gateway calls it once the change is
	// written.
	NotifySession(ctx context.Context, id string) error
	// SubscribeSessions subscribes to the notices and returns, once
	// subscribed, a channel of the session ids they carry, in the order
	// they came. The channel is closed when ctx ends or when the
	// subscription fails (its connection dropped): notices sent
	// meanwhile are lost, and the caller subscribes again. What reads
	// the subscription (a goroutine of the store's) ends with it.
	SubscribeSessions(ctx context.Context) (<-chan string, error)
}

// answerPollNotified is how often a replica subscribed to the store's
// notices reads the records of the sessions it has questions waiting
// in: for a notice lost, or a session that expired (no notice says so).
const answerPollNotified = 2 * time.Second

// Bounds of the pause before a replica subscribes again to the store's
// notices after a subscription failed; a subscription that lasted
// resubscribeReset starts again from the shorter one.
const (
	resubscribeMin   = 100 * time.Millisecond
	resubscribeMax   = 5 * time.Second
	resubscribeReset = 30 * time.Second
)

// pollEvery is how long the poll waits between two readings of every
// session with questions waiting or requests being handled here: no
// longer than a quarter of the sessions' TTL, so that a record is renewed
// while requests of it are being handled here (takeHanded).
func (s *sharedSessions) pollEvery() time.Duration {
	d := s.pollPlain
	if s.subscribed.Load() {
		d = s.pollNotified
	}
	return min(d, max(s.ttl/4, 10*time.Millisecond))
}

// noticed takes a notice of session id: when questions wait here in it,
// or requests of the copy held here are being handled, it marks the
// session for the poll to read and wakes the poll; any other notice costs
// two map lookups, or less (what cannot be a session id).
func (g *Gateway) noticed(id string) {
	s := g.shared
	if !validSessionID(id) {
		return
	}
	s.mu.Lock()
	_, ok := s.waiting[id]
	s.mu.Unlock()
	if !ok && !g.handlingIn(id) {
		return
	}
	s.mu.Lock()
	s.changed[id] = true
	s.mu.Unlock()
	s.wakePoll()
}

// handlingIn reports whether requests of shared session id are being
// handled here (Gateway.running), in a copy this replica holds: one whose
// record was written, so that a record read gone was deleted or expired
// (a session being made here has no record yet).
func (g *Gateway) handlingIn(id string) bool {
	g.sessMu.Lock()
	ok := g.running[id] != nil
	g.sessMu.Unlock()
	return ok && g.shared.held(id) != nil
}

// handledIn returns the shared sessions with requests being handled here,
// in copies this replica holds (handlingIn).
func (g *Gateway) handledIn() []string {
	g.sessMu.Lock()
	ids := make([]string, 0, len(g.running))
	for id := range g.running {
		ids = append(ids, id)
	}
	g.sessMu.Unlock()
	s := g.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.DeleteFunc(ids, func(id string) bool { return s.local[id] == nil })
}

// resweep makes the poll read every session with questions waiting, now:
// notices may have been lost, or the poll's pace changes.
func (s *sharedSessions) resweep() {
	s.mu.Lock()
	s.sweep = true
	s.mu.Unlock()
	s.wakePoll()
}

func (s *sharedSessions) wakePoll() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// toRead returns the sessions the poll reads: every one with questions
// waiting or requests being handled here (all, or a sweep asked for;
// swept is then true), else those notified since it last looked that
// still have either.
func (g *Gateway) toRead(all bool) (ids []string, swept bool) {
	s := g.shared
	s.mu.Lock()
	all = all || s.sweep
	s.sweep = false
	if !all {
		var handling []string
		for id := range s.changed {
			if s.waiting[id] != nil {
				ids = append(ids, id)
			} else {
				handling = append(handling, id)
			}
		}
		clear(s.changed)
		s.mu.Unlock()
		for _, id := range handling {
			if g.handlingIn(id) {
				ids = append(ids, id)
			}
		}
		return ids, false
	}
	clear(s.changed)
	s.mu.Unlock()
	ids = s.waitingIn(time.Now())
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	for _, id := range g.handledIn() {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	return ids, true
}

// notify tells the other replicas, through the store, that the record of
// session id changed, when the store can; polling covers a notice that
// cannot be sent.
func (g *Gateway) notify(ctx context.Context, id string) {
	s := g.shared
	if s.notifier == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if err := s.notifier.NotifySession(ctx, id); err != nil {
		g.log.Debug("the session store could not send a notice of a changed session; the other replicas find the change by polling", "err", err)
	}
}

// errSubscribePanicked: the session store panicked subscribing to its
// notices (logged).
var errSubscribePanicked = errors.New("the session store panicked subscribing to its notices")

// listenSessions keeps this replica subscribed to the store's notices
// until ctx ends, subscribing again (after a pause) when a subscription
// fails; Gateway.Close ends it (ctx), and the store's subscription with
// it.
func (g *Gateway) listenSessions(ctx context.Context) {
	s := g.shared
	pause := resubscribeMin
	for {
		var ch <-chan string
		err := errSubscribePanicked
		g.recovered("the session store, subscribing to its notices", func() { ch, err = s.notifier.SubscribeSessions(ctx) })
		if err == nil {
			start := time.Now()
			s.subscribed.Store(true)
			s.resweep() // what was notified before the subscription
			for id := range ch {
				g.noticed(id)
			}
			s.subscribed.Store(false)
			s.resweep()
			if time.Since(start) >= resubscribeReset {
				pause = resubscribeMin
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			g.log.Warn("the session store's notices could not be subscribed to; polling until they are", "err", err, "retry", pause)
		} else {
			g.log.Warn("the subscription to the session store's notices ended; polling until it is made again", "retry", pause)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, resubscribeMax)
	}
}
