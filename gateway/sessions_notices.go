package gateway

import (
	"context"
	"time"
)

// A store that implements SessionNotifier carries notices of changed
// sessions among the replicas: the replica that hands a client's answer
// to another replica's question, or deletes a session, sends a notice
// with the session's id once the record is written; every replica
// subscribed gets it, and one with questions waiting in that session
// reads its record at once (takeHanded) instead of at its next poll. A
// notice is a hint, nothing more: it carries no record and no answer,
// and the replica reads the record from the store as a poll does. The
// polling stays as the fallback, every answerPoll while this replica is
// not subscribed (a store without notices, a subscription that failed or
// is being made again) and every answerPollNotified while it is (a
// notice lost). A notice of a session this replica has no question
// waiting in costs a map lookup.

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

// pollEvery is how long the poll for handed answers waits between two
// readings of every session with questions waiting.
func (s *sharedSessions) pollEvery() time.Duration {
	if s.subscribed.Load() {
		return s.pollNotified
	}
	return s.pollPlain
}

// noticed takes a notice of session id: when questions wait here in it,
// it marks the session for the poll to read and wakes the poll; any
// other notice costs a map lookup, or less (what cannot be a session id).
func (s *sharedSessions) noticed(id string) {
	if !validSessionID(id) {
		return
	}
	s.mu.Lock()
	_, ok := s.waiting[id]
	if ok {
		s.changed[id] = true
	}
	s.mu.Unlock()
	if ok {
		s.wakePoll()
	}
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
// waiting (all, or a sweep asked for; swept is then true), else those
// notified since it last looked that still have questions waiting.
func (s *sharedSessions) toRead(all bool) (ids []string, swept bool) {
	s.mu.Lock()
	all = all || s.sweep
	s.sweep = false
	if !all {
		for id := range s.changed {
			if s.waiting[id] != nil {
				ids = append(ids, id)
			}
		}
		clear(s.changed)
		s.mu.Unlock()
		return ids, false
	}
	clear(s.changed)
	s.mu.Unlock()
	return s.waitingIn(time.Now()), true
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

// listenSessions keeps this replica subscribed to the store's notices
// until ctx ends, subscribing again (after a pause) when a subscription
// fails; Gateway.Close ends it (ctx), and the store's subscription with
// it.
func (g *Gateway) listenSessions(ctx context.Context) {
	s := g.shared
	pause := resubscribeMin
	for {
		ch, err := s.notifier.SubscribeSessions(ctx)
		if err == nil {
			start := time.Now()
			s.subscribed.Store(true)
			s.resweep() // what was notified before the subscription
			for id := range ch {
				s.noticed(id)
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
