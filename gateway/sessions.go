package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handshake-era client's session is go-sdk's: a map in the process that
// answered its initialize request. With SessionOptions.Store set, every
// replica of the gateway serves every session. The session is recorded in
// the store when it is made (its principal, its initialize parameters)
// and when it changes (the log level, resource subscriptions); a replica
// that gets a request of a session it does not hold makes the session
// again under the same id, by replaying its initialize request, its
// initialized notification and its changes to go-sdk's handler, and then
// serves the request. Every request of a session reads its record first:
// a session deleted on one replica (DELETE) or expired is gone on all of
// them, and a session is served only to its own principal.
//
// What is not shared: a request in flight (a call the server is still
// answering, a server's question to the client) belongs to the replica
// that is handling it; if that replica dies, the call fails and the
// client's next request is served by another one. Its id is claimed in
// the store while it is in flight, so that another replica refuses a
// request sent again under it (sessions_claims.go). A question's id names
// the copy of the session that asked it, and a client's answer to it is
// given only to that copy (sessions_asks.go).

// DefaultSessionTTL is how long a shared session lives after its last
// request when neither SessionOptions.TTL nor Options.SessionTimeout sets
// it.
const DefaultSessionTTL = 24 * time.Hour

// DefaultSessionStoreTimeout bounds each session store operation when
// SessionOptions.StoreTimeout is zero.
const DefaultSessionStoreTimeout = time.Second

// SessionOptions shares handshake-era client sessions among replicas.
type SessionOptions struct {
	// Store keeps the sessions; the redisstore and pgstore modules'
	// SessionStore types implement it, and SessionNotifier too (the
	// replicas then tell each other at once of the answers they hand
	// over). Required.
	Store SessionStore
	// StoreTimeout bounds each store operation; zero means
	// DefaultSessionStoreTimeout. A request whose session cannot be read
	// in time is answered 503: a session is never served unchecked.
	StoreTimeout time.Duration
	// TTL is how long a session lives after its last request (at least;
	// at most a quarter longer, as its record is not written on every
	// request); zero means Options.SessionTimeout, or DefaultSessionTTL
	// when that is zero too.
	TTL time.Duration
}

// SessionStore keeps the records of handshake-era client sessions, by
// session id. Records are the gateway's (JSON); a store keeps them as
// bytes. Implementations must be safe for concurrent use.
type SessionStore interface {
	// LoadSession returns the record of session id, or nil and no error
	// when there is none (never made, deleted, or expired).
	LoadSession(ctx context.Context, id string) ([]byte, error)
	// SaveSession stores rec as the record of session id, to expire ttl
	// after now.
	SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error
	// ReplaceSession stores rec as the record of session id, to expire
	// ttl after now, only if the session's record is old (byte for byte,
	// not deleted, not expired), in one step; it reports whether it did.
	// A record is changed and extended with it, so that a session deleted
	// meanwhile stays deleted and a change recorded meanwhile by another
	// replica is not lost.
	ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error)
	// DeleteSession removes the record of session id; deleting a record
	// that is not there is not an error.
	DeleteSession(ctx context.Context, id string) error
	// ClaimRequest records a claim of request in session by owner, to
	// expire ttl after now, only if there is none (create if absent; an
	// expired claim is none), in one step; it reports whether it did.
	// request names a JSON-RPC request id of the session, at most 65
	// bytes; owner is a token the replica makes for this one claim, at
	// most 64 bytes. A replica claims each request of a session that
	// could do harm run twice (a tool call) before it serves it, and renews the claim while it serves it, so that a
	// request sent again under the id of one in flight on another replica
	// is refused rather than run twice. Claims are kept apart from the
	// records of sessions, and per session.
	ClaimRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error)
	// RenewRequest makes the claim of request in session expire ttl
	// after now, only if it is there (not expired) and owner's, in one
	// step; it reports whether it did. false tells the replica the claim
	// is no longer its own (it expired, and maybe another replica claimed
	// the request since).
	RenewRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error)
	// ReleaseRequest removes the claim of request in session, once the
	// request is over, only if it is owner's, in one step (compare and
	// delete): a claim another replica made since owner's expired stays.
	// Releasing a claim that is not there, or not owner's, is not an
	// error.
	ReleaseRequest(ctx context.Context, session, request, owner string) error
}

// sessionRecord is what the store keeps of a session.
type sessionRecord struct {
	Principal string          `json:"principal"`
	Version   string          `json:"version"` // the protocol version the session speaks
	Init      json.RawMessage `json:"init"`    // the client's initialize params
	Level     string          `json:"level,omitempty"`
	Subs      []string        `json:"subs,omitempty"` // subscribed resource URIs
	Asks      []sharedAsk     `json:"asks,omitempty"` // questions to the client waiting for answers
	// Handed are the client's answers to questions of the replicas
	// that asked them, taken by another replica (sessions_handed.go).
	Handed  []handedAnswer `json:"handed,omitempty"`
	Touched time.Time      `json:"touched"`

	raw []byte // what it was read from
}

// maxSessionRecord bounds a record read from the store; maxSharedSubs
// bounds the subscriptions a record keeps.
const (
	maxSessionRecord = 1 << 20
	maxSharedSubs    = 256
)

// sharedSessions is the gateway's side of SessionOptions.
type sharedSessions struct {
	store   SessionStore
	timeout time.Duration
	ttl     time.Duration
	park    time.Duration // Options.ParkTimeout: how long a question to a client waits

	// gate makes go-sdk's next session id the one the gateway chose: a
	// request that makes a session holds it (a token in the channel)
	// until go-sdk asks for the id (nextSessionID). gateMu guards gated
	// and nextID.
	gate   chan struct{}
	gateMu sync.Mutex
	// replayToken is the value of replayHeader on replayed requests;
	// replicaToken names this replica in the records of the streams it
	// answers.
	replayToken, replicaToken string
	events                    *sharedEvents
	gated                     bool
	nextID                    string

	mu     sync.Mutex
	local  map[string]*heldSession  // sessions this replica holds
	making map[string]chan struct{} // sessions being made again here
	closed bool                     // the gateway is closing: nothing more is held
	// serving counts the requests of each session being served here
	// (POST, GET): a copy with none is idle (servingSession).
	serving map[string]int
	// waiting are the questions this replica asked and has not had the
	// answers to, by session and question id (sessions_handed.go).
	waiting map[string]map[string]*waitingAsk
	// changed are the sessions with questions waiting here that a notice
	// named since the poll last looked; sweep asks the poll to read every
	// session with questions waiting (sessions_notices.go).
	changed map[string]bool
	sweep   bool

	// endRequests cancels the requests of session id being handled here,
	// on either path, with cause (Gateway.endCopyRequests); nil: none is.
	endRequests func(id string, cause error)

	// notifier is the store's notices, nil when it has none; subscribed
	// says this replica is subscribed to them. wake wakes the poll for
	// handed answers; it reads every pollPlain, or pollNotified while
	// subscribed.
	notifier                SessionNotifier
	subscribed              atomic.Bool
	wake                    chan struct{}
	pollPlain, pollNotified time.Duration

	claimState // the request ids claimed here (sessions_claims.go)
}

// heldSession is a shared session this replica holds, with the changes
// of its record applied to it here (so that a change made on another
// replica is applied before the session's next request here).
type heldSession struct {
	ss    *mcp.ServerSession
	token string // names this copy in the ids of its questions (askID)
	level string
	subs  []string
	slot  *sessionSlot // its place under Options.MaxSessions, given back when it ends
	end   func()       // ends it as a cap does (endHeld); the session's record stays
}

func newSharedSessions(o *SessionOptions, sessionTimeout, park time.Duration) (*sharedSessions, error) {
	if o.Store == nil {
		return nil, errors.New("gateway: SessionOptions.Store is nil")
	}
	s := &sharedSessions{store: o.Store, timeout: o.StoreTimeout, ttl: o.TTL, park: park,
		gate: make(chan struct{}, 1), replayToken: rand.Text(), replicaToken: rand.Text(), local: make(map[string]*heldSession), making: make(map[string]chan struct{}),
		waiting: make(map[string]map[string]*waitingAsk), changed: make(map[string]bool),
		wake: make(chan struct{}, 1), pollPlain: answerPoll, pollNotified: answerPollNotified}
	s.notifier, _ = o.Store.(SessionNotifier)
	if s.timeout <= 0 {
		s.timeout = DefaultSessionStoreTimeout
	}
	if s.ttl <= 0 {
		s.ttl = sessionTimeout
	}
	if s.ttl <= 0 {
		s.ttl = DefaultSessionTTL
	}
	return s, nil
}

// validSessionID reports whether id can be a session id the gateway made
// (go-sdk's rand.Text: 26 characters of base32), so that nothing else is
// looked up in the store.
func validSessionID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, c := range id {
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// load reads the record of session id; nil when there is none.
func (s *sharedSessions) load(ctx context.Context, id string) (*sessionRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	b, err := s.store.LoadSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, nil
	}
	if len(b) > maxSessionRecord {
		return nil, fmt.Errorf("the record of a session is %d bytes, over %d", len(b), maxSessionRecord)
	}
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("the record of a session cannot be read: %w", err)
	}
	rec.raw = b
	return &rec, nil
}

// save writes the record of session id: a new one (create), or one read
// from the store (not create: written only if the store still has it as
// it was read, so that a session deleted by another replica since stays
// deleted and a change another replica recorded since is not lost;
// errRecordChanged if it does not).
func (s *sharedSessions) save(ctx context.Context, id string, rec *sessionRecord, create bool) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	rec.Touched = time.Now().UTC()
	rec.forgetEnded(rec.Touched)
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if len(b) > maxSessionRecord {
		return errRecordTooBig
	}
	// The record is written again once it is a quarter of its TTL old,
	// so it is kept a quarter longer: it outlives the session's last
	// request by at least the TTL.
	ttl := s.ttl + s.ttl/4
	if create {
		return s.store.SaveSession(ctx, id, b, ttl)
	}
	ok, err := s.store.ReplaceSession(ctx, id, rec.raw, b, ttl)
	if err == nil && !ok {
		err = errRecordChanged
	}
	return err
}

// errRecordTooBig: a session's record would be over maxSessionRecord,
// which no replica reads back.
var errRecordTooBig = fmt.Errorf("the record of the session would be over %d bytes", maxSessionRecord)

// errSessionGone: a session's record is not in the store (deleted or
// expired).
var errSessionGone = errors.New("the session is not in the session store")

// errRecordChanged: a session's record was changed, deleted or expired
// in the store since it was read.
var errRecordChanged = errors.New("the record of the session changed in the session store")

func (s *sharedSessions) delete(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	return s.store.DeleteSession(ctx, id)
}

// update changes the record of session id with fn and saves it, reading
// it again when another replica changed it meanwhile (a few times).
func (s *sharedSessions) update(ctx context.Context, id string, fn func(*sessionRecord)) error {
	for range 8 {
		rec, err := s.load(ctx, id)
		if err != nil {
			return err
		}
		if rec == nil {
			return errSessionGone
		}
		fn(rec)
		if err := s.save(ctx, id, rec, false); !errors.Is(err, errRecordChanged) {
			return err
		}
	}
	return errRecordChanged
}

// held returns the session id this replica holds, or nil.
func (s *sharedSessions) held(id string) *mcp.ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.local[id]; h != nil {
		return h.ss
	}
	return nil
}

// hold records ss as held here, with rec applied to it, until it ends;
// the goroutine waiting for its end is owned by the session, which
// Gateway.Close closes. Once the gateway is closing (shut), ss is closed
// instead, and hold reports false.
func (s *sharedSessions) hold(ss *mcp.ServerSession, rec *sessionRecord, wg *sync.WaitGroup) bool {
	id := ss.ID()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ss.Close()
		return false
	}
	if h := s.local[id]; h != nil && h.ss == ss {
		s.mu.Unlock()
		return true
	}
	s.local[id] = &heldSession{ss: ss, token: rand.Text(), level: rec.Level, subs: slices.Clone(rec.Subs), end: func() { s.endHeld(ss) }}
	s.mu.Unlock()
	wg.Go(func() {
		_ = ss.Wait()
		var slot *sessionSlot
		s.mu.Lock()
		if h := s.local[id]; h != nil && h.ss == ss {
			delete(s.local, id)
			slot = h.slot
		}
		s.mu.Unlock()
		slot.release()
	})
	return true
}

// endHeld ends ss, the copy of a shared session held here, to make room
// at a cap (endEvicted), as endIdle does, a request being served by it or
// not: its requests being handled here are cancelled first (the server is
// told, and each is answered with errCopyEndedAtCap), since go-sdk closes
// a session only once its requests have ended, and until it has, every
// other request of the session here waits to make it again. A session not
// held here is just closed.
func (s *sharedSessions) endHeld(ss *mcp.ServerSession) { s.endCopyHeld(ss, true) }

// endIdle ends ss, the copy of a shared session held here, whose idle
// timer fired, unless a request of the session is being served here (one
// came as the timer fired): then it reports false, and the copy goes on.
func (s *sharedSessions) endIdle(ss *mcp.ServerSession) bool { return s.endCopyHeld(ss, false) }

// endCopyHeld ends ss, the copy of a shared session held here; the
// session's record stays. The copy is no longer held from now on, and a
// request of the session that comes meanwhile waits until go-sdk has
// closed the copy, then makes it again (remake): it finds neither the
// copy closing, which go-sdk would answer 404 though the session goes on,
// nor a new copy that the end of this one would drop from go-sdk's
// handler (which forgets a closed session by its id). Unless busyToo, a
// copy a request is being served by (servingSession), or being made, is
// left, and endCopyHeld reports false.
func (s *sharedSessions) endCopyHeld(ss *mcp.ServerSession, busyToo bool) bool {
	id := ss.ID()
	s.mu.Lock()
	if !busyToo && (s.serving[id] > 0 || s.making[id] != nil) {
		s.mu.Unlock()
		return false
	}
	h := s.local[id]
	if h == nil || h.ss != ss || s.making[id] != nil {
		s.mu.Unlock()
		_ = ss.Close()
		return true
	}
	delete(s.local, id)
	slot := h.slot
	done := make(chan struct{})
	s.making[id] = done
	busy := s.serving[id] > 0
	s.mu.Unlock()
	if busy && s.endRequests != nil {
		s.endRequests(id, errCopyEndedAtCap)
	}
	_ = ss.Close()
	s.mu.Lock()
	delete(s.making, id)
	s.mu.Unlock()
	close(done)
	slot.release()
	return true
}

// keep hands slot, taken for the request that made session id here, to
// the session held, which gives it back when it ends, and returns the
// session claimed for it at a cap, to be ended (endEvicted); when none is
// held (it was not made, or has ended) the slot is given back now.
func (s *sharedSessions) keep(id string, slot *sessionSlot) *evicted {
	if slot == nil {
		return nil
	}
	s.mu.Lock()
	if h := s.local[id]; h != nil && h.slot == nil {
		h.slot = slot
		if s.serving[id] == 0 {
			slot.markIdle(h.end)
		}
		s.mu.Unlock()
		return slot.commit()
	}
	s.mu.Unlock()
	slot.release()
	return nil
}

// copyToken returns the token of the copy of session id held here, ""
// when none is.
func (s *sharedSessions) copyToken(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.local[id]; h != nil {
		return h.token
	}
	return ""
}

// shut makes hold refuse sessions from now on: Gateway.Close calls it
// before it closes the sessions and waits for their ends.
func (s *sharedSessions) shut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

// applied records that a change was applied to session id here.
func (s *sharedSessions) applied(id string, fn func(*sessionRecord)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.local[id]; h != nil {
		r := &sessionRecord{Level: h.level, Subs: h.subs}
		fn(r)
		h.level, h.subs = r.Level, r.Subs
	}
}

// behind returns the requests that apply to session id, held here, the
// changes rec has that it has not.
func (s *sharedSessions) behind(id string, rec *sessionRecord) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.local[id]
	if h == nil {
		return nil
	}
	var steps []string
	if rec.Level != h.level && rec.Level != "" {
		steps = append(steps, levelStep(rec.Level))
	}
	for i, uri := range rec.Subs {
		if !slices.Contains(h.subs, uri) {
			steps = append(steps, subStep("resources/subscribe", i, uri))
		}
	}
	for i, uri := range h.subs {
		if !slices.Contains(rec.Subs, uri) {
			steps = append(steps, subStep("resources/unsubscribe", i, uri))
		}
	}
	h.level, h.subs = rec.Level, slices.Clone(rec.Subs)
	return steps
}

// serveShared serves a handshake-era request of session id (an HTTP
// request with Mcp-Session-Id) when sessions are shared: it checks the
// session's record, makes the session here if another replica made it,
// and passes the request to go-sdk's handler.
func (g *Gateway) serveShared(w http.ResponseWriter, r *http.Request, id string) {
	s := g.shared
	if !validSessionID(id) {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	rec, err := s.load(r.Context(), id)
	if err != nil {
		g.log.Warn("the session store failed; the request is refused", "err", err)
		http.Error(w, "the gateway's session store is unavailable; try again", http.StatusServiceUnavailable)
		return
	}
	if rec == nil {
		g.endCopy(id) // deleted or expired on another replica
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if rec.Principal != principalOf(r) {
		http.Error(w, "session user mismatch", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodPost {
		defer s.servingSession(id)() // its copy here is not idle meanwhile
	}
	if r.Method == http.MethodDelete {
		if err := s.delete(r.Context(), id); err != nil {
			http.Error(w, "the gateway's session store is unavailable; try again", http.StatusServiceUnavailable)
			return
		}
		g.notify(r.Context(), id) // its questions on other replicas end
		if s.held(id) == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		g.stateful.ServeHTTP(w, r)
		return
	}
	if r.Method == http.MethodGet {
		if st := lastStream(r.Header.Get("Last-Event-ID")); st != "" && !s.events.isLocal(id, st) && g.resumeElsewhere(w, r, id, st) {
			return
		}
	}
	var claims *postClaims
	aw := &askIDWriter{ResponseWriter: w, s: s, id: id}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.maxRequestBytes()))
		r.Body.Close()
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		if body = g.screenAnswers(w, r, id, rec, body); body == nil {
			return
		}
		r.Body = putBack(body)
		r.ContentLength = int64(len(body))
		if ids := requestIDs(body); len(ids) > 0 {
			r = r.WithContext(context.WithValue(r.Context(), callIDsKey{}, ids))
		}
		var ok bool
		if claims, ok = g.claimPost(w, r, id, body); !ok {
			return
		}
		if claims != nil {
			r = r.WithContext(context.WithValue(r.Context(), claimsKey{}, claims))
			defer func() { claims.end(r.Context().Err() != nil, aw.refused()) }()
		}
	}
	if s.held(id) == nil {
		if err := g.remake(r, id, rec); err != nil {
			if capErr := (*sessionCapError)(nil); errors.As(err, &capErr) {
				g.refuseSession(w, r, capErr)
				return
			}
			g.log.Warn("a session made on another replica could not be made here", "err", err)
			http.Error(w, "the session could not be resumed on this replica: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	} else if steps := s.behind(id, rec); len(steps) > 0 {
		// Changed on another replica since this one applied it.
		if err := g.replaySteps(r, id, rec.Version, steps); err != nil {
			g.log.Warn("a change of a session made on another replica could not be applied here", "err", err)
		}
	}
	if time.Since(rec.Touched) > s.ttl/4 {
		// A record changed meanwhile was written (and extended) by
		// another replica; one deleted stays deleted.
		if err := s.save(r.Context(), id, rec, false); err != nil && !errors.Is(err, errRecordChanged) {
			g.log.Warn("the session store failed to extend a session", "err", err)
		}
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		if claims != nil {
			claims.toSDK()
		}
		aw.ResponseWriter = w
		g.stateful.ServeHTTP(aw, r)
	}
	switch r.Method {
	case http.MethodPost:
		// Its copy here is not idle (liveSessions ends idle sessions)
		// until the POST is answered, on either path.
		defer g.live.post(id, rec.Principal)()
		if ls := g.live.get(id, rec.Principal); ls != nil && !g.opts.slowPathOnly {
			g.serveLive(w, r, ls, slow)
			return
		}
	case http.MethodGet:
		defer g.live.stream(id, rec.Principal)()
	}
	slow(w, r)
}

// recordSession records a session that answered its initialize request
// here (not a replay), so that other replicas can serve it; version is
// the protocol version the session speaks (the one the gateway answered,
// which the client's later requests carry).
func (g *Gateway) recordSession(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, params *mcp.InitializeParams, version string) error {
	s := g.shared
	if s == nil || ss == nil || ss.ID() == "" {
		return nil
	}
	if g.replaying(req) {
		return nil // held once the replay is done
	}
	init, err := initializeParamsJSON(params)
	if err != nil {
		return err
	}
	rec := &sessionRecord{Principal: PrincipalFrom(ctx), Version: version, Init: init}
	if err := s.save(ctx, ss.ID(), rec, true); err != nil {
		return err
	}
	if !s.hold(ss, rec, &g.sessWG) {
		return errClosed
	}
	return nil
}

// sessionChanged records a change of a shared session (its log level, a
// subscription) made by a request that is not a replay.
func (g *Gateway) sessionChanged(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, fn func(*sessionRecord)) {
	s := g.shared
	if s == nil || ss == nil || ss.ID() == "" || g.replaying(req) {
		return
	}
	if err := s.update(ctx, ss.ID(), fn); err != nil {
		g.log.Warn("a change of a session could not be shared with the other replicas", "err", err)
	}
	s.applied(ss.ID(), fn)
}
