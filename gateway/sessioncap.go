package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sessionSlots counts the handshake-era client sessions the gateway holds
// (Options.MaxSessions), in all and by principal
// (Options.MaxSessionsPerPrincipal). A request that would make a session
// takes a slot before go-sdk's handler sees it (ServeHTTP, remake); the
// session made keeps it (liveSessions.keep, sharedSessions.keep) until it
// ends, and a request that made none gives it back at once.
//
// The slots of idle sessions (no request of theirs being served: no POST
// in flight, no standalone stream open) are listed in the order they went
// idle, in all and by principal. At a cap, take claims the session idle
// longest (of the principal's own at its cap, of anyone's at the
// gateway's) for the new session; only when none is idle is the new one
// refused. The claimed session is ended only once the new session is
// made and kept (commit), so that a request that makes no session (one
// go-sdk refuses, one that is no initialize) ends none: its slot's
// release gives the claimed session back to the idle lists. Meanwhile
// the slots taken exceed the cap by the claims pending. Each step is
// O(1).
type sessionSlots struct {
	max, perPrincipal int // 0: no cap

	mu   sync.Mutex
	n    int                  // slots taken
	per  map[string]int       // slots taken by principal (not "")
	idle slotList             // slots of idle sessions, longest idle first
	byP  map[string]*slotList // idle, by principal (not "")
}

// sessionSlot is one slot taken; its release gives it back once. A nil
// *sessionSlot (no cap) releases nothing.
type sessionSlot struct {
	s         *sessionSlots
	principal string

	// Guarded by s.mu.
	released bool
	isIdle   bool         // in s.idle (and s.byP[principal])
	wantIdle bool         // its session is idle (listed unless claimed or released)
	claimed  bool         // claimed by a take for a new session: not listed
	since    time.Time    // when it went idle
	end      func()       // ends its session (idle only)
	victim   *sessionSlot // the slot claimed for this one, ended at commit
	ev       *evicted     // what is logged when victim is ended
	fromP    bool         // victim was claimed among its principal's own
	prev     *sessionSlot
	next     *sessionSlot // in s.idle
	pprev    *sessionSlot
	pnext    *sessionSlot // in s.byP[principal]
}

// slotList is an intrusive list of idle slots, longest idle first; byP
// says which links it uses.
type slotList struct {
	head, tail *sessionSlot
	byP        bool
}

func (l *slotList) links(sl *sessionSlot) (prev, next **sessionSlot) {
	if l.byP {
		return &sl.pprev, &sl.pnext
	}
	return &sl.prev, &sl.next
}

func (l *slotList) pushBack(sl *sessionSlot) {
	prev, next := l.links(sl)
	*prev, *next = l.tail, nil
	if l.tail != nil {
		_, tn := l.links(l.tail)
		*tn = sl
	} else {
		l.head = sl
	}
	l.tail = sl
}

// insert puts sl first (front) or last.
func (l *slotList) insert(sl *sessionSlot, front bool) {
	if !front || l.head == nil {
		l.pushBack(sl)
		return
	}
	prev, next := l.links(sl)
	*prev, *next = nil, l.head
	hp, _ := l.links(l.head)
	*hp = sl
	l.head = sl
}

func (l *slotList) remove(sl *sessionSlot) {
	prev, next := l.links(sl)
	if *prev != nil {
		_, pn := l.links(*prev)
		*pn = *next
	} else {
		l.head = *next
	}
	if *next != nil {
		np, _ := l.links(*next)
		*np = *prev
	} else {
		l.tail = *prev
	}
	*prev, *next = nil, nil
}

// sessionCapError is a session refused at a cap.
type sessionCapError struct {
	max          int
	perPrincipal bool
}

func (e *sessionCapError) Error() string {
	if e.perPrincipal {
		return fmt.Sprintf("you hold the most client sessions of the gateway one principal may hold: %d (MaxSessionsPerPrincipal, --max-sessions-per-principal), none of them idle; end a session you no longer use (DELETE) or try again later", e.max)
	}
	return fmt.Sprintf("the gateway holds the most client sessions it allows: %d (MaxSessions, --max-sessions), none of them idle; end a session you no longer use (DELETE) or try again later", e.max)
}

// capName names the cap in logs.
func (e *sessionCapError) capName() string {
	if e.perPrincipal {
		return "MaxSessionsPerPrincipal"
	}
	return "MaxSessions"
}

// rpcError is the JSON-RPC error a refused request is answered with: its
// data names the cap and its value.
func (e *sessionCapError) rpcError() *jsonrpc.Error {
	limit := "sessions"
	if e.perPrincipal {
		limit = "sessionsPerPrincipal"
	}
	data, _ := json.Marshal(struct {
		Limit string `json:"limit"`
		Max   int    `json:"max"`
	}{limit, e.max})
	return &jsonrpc.Error{Code: CodeTooManySessions, Message: e.Error(), Data: data}
}

// status is the HTTP status of a refused request: 429 for a principal at
// its cap, 503 for a gateway at its own.
func (e *sessionCapError) status() int {
	if e.perPrincipal {
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

func newSessionSlots(o *Options) *sessionSlots {
	return &sessionSlots{max: o.maxSessions(), perPrincipal: o.maxSessionsPerPrincipal(),
		per: make(map[string]int), byP: make(map[string]*slotList)}
}

// evicted is a session ended to make room at a cap.
type evicted struct {
	cap       string // the cap it was ended at
	principal string
	idle      time.Duration
	end       func() // ends it; called without the lock
}

// take takes a slot for a session of principal. At a cap it claims the
// slot of the session idle longest (the principal's own at its cap,
// anyone's at the gateway's), which is ended once the new session is kept
// (commit) and listed idle again if none is (release); with none idle it
// refuses. With no cap it counts nothing and returns nil. A slot taken is
// busy until its session is kept and idle (markIdle).
func (s *sessionSlots) take(principal string) (*sessionSlot, *sessionCapError) {
	if s.max == 0 && s.perPrincipal == 0 {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	atAll := s.max > 0 && s.n >= s.max
	atMine := principal != "" && s.perPrincipal > 0 && s.per[principal] >= s.perPrincipal
	var victim *sessionSlot
	var capErr *sessionCapError
	switch {
	case atMine:
		capErr = &sessionCapError{max: s.perPrincipal, perPrincipal: true}
		if l := s.byP[principal]; l != nil {
			victim = l.head
		}
	case atAll:
		capErr = &sessionCapError{max: s.max}
		victim = s.idle.head
	}
	sl := &sessionSlot{s: s, principal: principal}
	if capErr != nil {
		if victim == nil {
			return nil, capErr
		}
		sl.victim, sl.fromP = victim, atMine
		sl.ev = &evicted{cap: capErr.capName(), principal: victim.principal, idle: time.Since(victim.since)}
		s.unidleLocked(victim)
		victim.claimed = true
	}
	if principal != "" && s.perPrincipal > 0 {
		s.per[principal]++
	}
	s.n++
	return sl, nil
}

// commit returns the session claimed for sl's, which has been made and
// kept, to be ended (its end, without the lock), or nil. When a request
// of the claimed session came meanwhile, the session idle longest now
// (among the same principal's when it was claimed among them), other than
// sl's own just kept, is ended instead, and with none idle the claimed one
// is: the cap holds.
func (sl *sessionSlot) commit() *evicted {
	if sl == nil {
		return nil
	}
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ev := sl.victim, sl.ev
	sl.victim, sl.ev = nil, nil
	if v == nil || v.released {
		return nil
	}
	if !v.wantIdle {
		l := &s.idle
		if sl.fromP {
			l = s.byP[v.principal]
		}
		// The session idle longest other than sl's own, just made.
		var o *sessionSlot
		if l != nil {
			if o = l.head; o == sl {
				if _, next := l.links(o); next != nil {
					o = *next
				} else {
					o = nil
				}
			}
		}
		if o != nil {
			s.unclaimLocked(v)
			v = o
			ev.principal, ev.idle = v.principal, time.Since(v.since)
		}
	}
	ev.end = v.end
	s.releaseLocked(v)
	return ev
}

// unclaimLocked lists v, claimed for a session that was not made, as
// idle again if its session is: first if it is still idle longest.
func (s *sessionSlots) unclaimLocked(v *sessionSlot) {
	v.claimed = false
	if v.released || !v.wantIdle || v.isIdle {
		return
	}
	v.isIdle = true
	front := s.idle.head == nil || !v.since.After(s.idle.head.since)
	s.idle.insert(v, front)
	if v.principal != "" {
		l := s.byP[v.principal]
		if l == nil {
			l = &slotList{byP: true}
			s.byP[v.principal] = l
		}
		l.insert(v, l.head == nil || !v.since.After(l.head.since))
	}
}

// taken returns the slots taken, in all and by principal.
func (s *sessionSlots) taken(principal string) (all, mine int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.per[principal]
}

// idleCount returns the slots of idle sessions, in all (a walk of the
// list: for tests).
func (s *sessionSlots) idleCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sl := s.idle.head; sl != nil; sl = sl.next {
		n++
	}
	return n
}

// release gives the slot back, once.
func (sl *sessionSlot) release() {
	if sl == nil {
		return
	}
	sl.s.mu.Lock()
	defer sl.s.mu.Unlock()
	sl.s.releaseLocked(sl)
}

func (s *sessionSlots) releaseLocked(sl *sessionSlot) {
	if sl.released {
		return
	}
	sl.released = true
	s.unidleLocked(sl)
	sl.end = nil
	if v := sl.victim; v != nil {
		// Its session was not made: the one claimed for it goes on.
		sl.victim, sl.ev = nil, nil
		s.unclaimLocked(v)
	}
	s.n--
	if sl.principal != "" && s.perPrincipal > 0 {
		if s.per[sl.principal]--; s.per[sl.principal] <= 0 {
			delete(s.per, sl.principal)
		}
	}
}

// markIdle lists the slot's session, which end ends, as idle from now:
// no request of it is being served.
func (sl *sessionSlot) markIdle(end func()) {
	if sl == nil {
		return
	}
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl.released || sl.wantIdle {
		return
	}
	sl.wantIdle, sl.since, sl.end = true, time.Now(), end
	if sl.claimed {
		return
	}
	sl.isIdle = true
	s.idle.pushBack(sl)
	if sl.principal != "" {
		l := s.byP[sl.principal]
		if l == nil {
			l = &slotList{byP: true}
			s.byP[sl.principal] = l
		}
		l.pushBack(sl)
	}
}

// markBusy takes the slot's session off the idle lists: a request of it
// is being served.
func (sl *sessionSlot) markBusy() {
	if sl == nil {
		return
	}
	sl.s.mu.Lock()
	defer sl.s.mu.Unlock()
	sl.wantIdle = false
	sl.s.unidleLocked(sl)
}

func (s *sessionSlots) unidleLocked(sl *sessionSlot) {
	if !sl.isIdle {
		return
	}
	sl.isIdle = false
	s.idle.remove(sl)
	if sl.principal != "" {
		if l := s.byP[sl.principal]; l != nil {
			if l.remove(sl); l.head == nil {
				delete(s.byP, sl.principal)
			}
		}
	}
}

// takeSlot takes a slot for a session r would make: at a cap it claims
// the session idle longest, ended once r's session is kept (endEvicted),
// and refuses r (answered here, ok false) when none is idle.
func (g *Gateway) takeSlot(w http.ResponseWriter, r *http.Request, principal string) (_ *sessionSlot, ok bool) {
	slot, capErr := g.slots.take(principal)
	if capErr != nil {
		g.refuseSession(w, r, capErr)
		return nil, false
	}
	return slot, true
}

// endEvicted ends the session claimed to make room (commit), if any, as
// Options.SessionTimeout would: go-sdk closes it (a copy of a shared
// session: only the copy), and its client's next request is answered 404.
func (g *Gateway) endEvicted(ctx context.Context, ev *evicted) {
	if ev == nil {
		return
	}
	// At the gateway's own cap it is a warning: the gateway is full, and
	// another user's session ends; at a principal's, the principal's own.
	level := slog.LevelInfo
	if ev.cap == "MaxSessions" {
		level = slog.LevelWarn
	}
	g.log.Log(ctx, level, "the client session idle longest is ended to make room for a new one", "cap", ev.cap, "principal", ev.principal, "idle", ev.idle.Round(time.Millisecond))
	if ev.end != nil {
		ev.end()
	}
}

// refuseSession answers r, a request that would make a session past a
// cap, with the cap's error, and logs it.
func (g *Gateway) refuseSession(w http.ResponseWriter, r *http.Request, e *sessionCapError) {
	g.log.Warn("a client session is refused: the gateway holds the most sessions it allows, none of them idle", "cap", e.capName(), "max", e.max, "principal", principalOf(r), "remote", r.RemoteAddr)
	writeRPCError(w, e.status(), e.rpcError())
}

// servingSession counts a request (POST, GET) of session id being served
// here until the returned function is called: the copy held here, if
// any, is not idle meanwhile.
func (s *sharedSessions) servingSession(id string) (done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving == nil {
		s.serving = make(map[string]int)
	}
	s.serving[id]++
	if h := s.local[id]; h != nil {
		h.slot.markBusy()
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.serving[id]--; s.serving[id] > 0 {
			return
		}
		delete(s.serving, id)
		if h := s.local[id]; h != nil {
			h.slot.markIdle(h.end)
		}
	}
}
