package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"
)

// A client's answer that reaches a replica other than the one that asked
// the question (sessions_asks.go) is handed to the replica that asked
// through the session's record: the replica that got it takes the
// question out of the record's Asks and puts the answer in its Handed,
// with the id of the asking copy (its number), in one write
// (ReplaceSession), so that an answer is handed once and a second answer
// with the same id finds no question, and then sends a notice of the
// session when the store has notices (sessions_notices.go). Each replica
// reads the record of a session it has questions waiting in when a
// notice of it comes, and the records of all of them every answerPoll
// (every answerPollNotified while it is subscribed to notices); it takes
// the answers handed to it out of the record, again in one write, and
// gives each to its question if it still waits here in the same copy, as
// the client would have: a POST of the answer to go-sdk's handler, with
// the values of the question's context (go-sdk gives a session's
// questions those of the request that made the session here: its
// principal, which go-sdk's handler checks against the session's). A
// record read gone meanwhile (the session was deleted on another
// replica, or expired) ends the session here, and with it the questions
// waiting in it.

// answerPoll is how often a replica with questions waiting reads their
// sessions' records for the answers handed to it, while it is not
// subscribed to the store's notices.
const answerPoll = 250 * time.Millisecond

// maxHandedAnswer bounds an answer handed to another replica through a
// session's record; a longer one is dropped.
const maxHandedAnswer = 256 << 10

// handedAnswer is a client's answer to another replica's question.
type handedAnswer struct {
	Ask sharedAsk       `json:"ask"` // the question it answers
	Msg json.RawMessage `json:"msg"` // the answer, with the copy's id, as go-sdk writes it
}

// waitingAsk is a question this replica asked and has not had the answer
// to: until when it can wait, and the values of its context (those of the
// request that made the session here, its principal's among them).
type waitingAsk struct {
	until time.Time
	vals  context.Context
}

// wait notes that this replica asked question ask of session id, to wait
// until until at the latest.
func (s *sharedSessions) wait(ctx context.Context, id, ask string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting[id] == nil {
		s.waiting[id] = make(map[string]*waitingAsk)
	}
	s.waiting[id][ask] = &waitingAsk{until: until, vals: context.WithoutCancel(ctx)}
}

// isWaiting reports whether question ask of session id waits here.
func (s *sharedSessions) isWaiting(id, ask string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waiting[id][ask]
	return w != nil && live(w.until, time.Now())
}

// unwait forgets question ask of session id: answered or withdrawn.
func (s *sharedSessions) unwait(id, ask string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting[id], ask)
	if len(s.waiting[id]) == 0 {
		delete(s.waiting, id)
	}
}

// unwaitSession forgets the questions of session id: it ended here.
func (s *sharedSessions) unwaitSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, id)
}

// waitingIn returns the sessions with questions waiting here, forgetting
// those that can no longer be waiting.
func (s *sharedSessions) waitingIn(now time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, asks := range s.waiting {
		for k, w := range asks {
			if !live(w.until, now) {
				delete(asks, k)
			}
		}
		if len(asks) == 0 {
			delete(s.waiting, id)
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// hand moves, in rec, each of answers from the question it answers
// (taken out of Asks) to Handed, when rec still has that question; it
// forgets the handed answers whose questions can no longer be waiting,
// and returns how many of answers it did not hand.
func (s *sharedSessions) hand(rec *sessionRecord, answers []handedAnswer) (lost int) {
	now := time.Now()
	rec.Handed = slices.DeleteFunc(rec.Handed, func(h handedAnswer) bool { return !live(h.Ask.Until, now) })
	for _, h := range answers {
		if _, ok := s.otherAsk(rec, h.Ask.ID); !ok {
			lost++
			continue
		}
		rec.Asks = dropAsk(rec.Asks, h.Ask.ID)
		rec.Handed = append(rec.Handed, h)
	}
	return lost
}

// pollHanded gives this replica's questions the answers other replicas
// handed to them, and ends the copies held here of sessions ended
// elsewhere: it reads the records of the sessions with questions waiting
// or requests being handled here every pollEvery, and those a notice
// named as soon as it comes (sessions_notices.go), until ctx ends.
func (g *Gateway) pollHanded(ctx context.Context) {
	s := g.shared
	t := time.NewTimer(s.pollEvery())
	defer t.Stop()
	for {
		all := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			all = true
		case <-s.wake:
		}
		ids, swept := g.toRead(all)
		if swept {
			t.Reset(s.pollEvery())
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return
			}
			g.recovered("the session store, reading a shared session's record", func() { g.takeHanded(ctx, id) })
		}
	}
}

// takeHanded takes the answers handed to this replica's questions out of
// the record of session id and gives them to the questions; a record
// gone ends the session's copy here (endCopy), and one a quarter of its
// TTL old is renewed while requests of the session are being handled
// here.
func (g *Gateway) takeHanded(ctx context.Context, id string) {
	s := g.shared
	rec, err := s.load(ctx, id)
	if err != nil {
		g.log.Debug("the session store could not be read for the answers other replicas took", "err", err)
		return
	}
	if rec == nil {
		g.endCopy(id) // deleted on another replica, or expired
		return
	}
	if time.Since(rec.Touched) > s.ttl/4 && g.handlingIn(id) {
		// Not idle while its requests are being handled here: its
		// record is renewed, as a request renews it (serveShared).
		if err := s.save(ctx, id, rec, false); err != nil && !errors.Is(err, errRecordChanged) {
			g.log.Debug("the session store failed to extend a session with requests in flight", "err", err)
		}
	}
	if !slices.ContainsFunc(rec.Handed, func(h handedAnswer) bool { return h.Ask.Replica == s.replicaToken }) {
		return
	}
	var taken []handedAnswer
	err = s.update(ctx, id, func(rec *sessionRecord) {
		taken = taken[:0]
		rec.Handed = slices.DeleteFunc(rec.Handed, func(h handedAnswer) bool {
			if h.Ask.Replica != s.replicaToken {
				return false
			}
			taken = append(taken, h)
			return true
		})
	})
	if err != nil {
		g.log.Debug("the session store failed to give the answers other replicas took", "err", err)
		return
	}
	for _, h := range taken {
		g.giveHanded(id, rec.Version, h)
	}
}

// giveHanded gives answer h to the question of session id it answers,
// when that question still waits here, in the copy that asked it.
func (g *Gateway) giveHanded(id, version string, h handedAnswer) {
	s := g.shared
	s.mu.Lock()
	w := s.waiting[id][h.Ask.ID]
	var tok string
	if held := s.local[id]; held != nil {
		tok = held.token
	}
	s.mu.Unlock()
	if asker, _, _ := parseAskID(h.Ask.ID); w == nil || asker != tok {
		g.log.Warn("a client's answer another replica took was dropped: its question no longer waits here")
		return
	}
	s.unwait(id, h.Ask.ID)
	ctx, cancel := context.WithTimeout(w.vals, 10*time.Second)
	defer cancel()
	// Not the ids of the requests of the POST the values came with, nor
	// its claims: this POST has none (replayRequest).
	ctx = context.WithValue(ctx, claimsKey{}, (*postClaims)(nil))
	req, _ := http.NewRequestWithContext(context.WithValue(ctx, callIDsKey{}, []json.RawMessage(nil)), http.MethodPost, "/", bytes.NewReader(h.Msg))
	req.Header.Set(replayHeader, s.replayToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", version)
	rw := &replayWriter{header: http.Header{}}
	g.stateful.ServeHTTP(rw, req)
	if rw.status != http.StatusAccepted {
		g.log.Warn("a client's answer another replica took could not be given to its question", "status", rw.status, "body", rw.body.String())
	}
}

// endCopy ends the copy held here of shared session id, whose record is
// gone (deleted on another replica, or expired), as a DELETE of it here
// would: its questions waiting here end, its calls in flight on either
// path are cancelled (the server is told, as when the client cancels
// one) and their POSTs answered as the calls' ends are, and then go-sdk
// closes the copy, which waits for its requests being handled: cancelled
// first, they end at once. Nothing is done for a session not held here
// (one being made here has no record yet).
func (g *Gateway) endCopy(id string) {
	s := g.shared
	s.unwaitSession(id)
	ss := s.held(id)
	if ss == nil {
		return
	}
	g.endCopyRequests(id, errSessionEndedElsewhere)
	_ = ss.Close()
}

// endCopyRequests cancels, with cause, the requests of session id being
// handled here on either path (the server is told, as when the client
// cancels one), and the calls on the fast path yet to reach the
// middleware: the copy held here is ending.
func (g *Gateway) endCopyRequests(id string, cause error) {
	g.sessMu.Lock()
	for rr := g.running[id]; rr != nil; rr = rr.next {
		rr.cancel(cause)
	}
	g.sessMu.Unlock()
	g.live.end(id)
}
