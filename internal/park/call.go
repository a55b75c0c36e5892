package park

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Run makes p's call with run, on a goroutine of its own whose context
// outlives ctx (the call outlives its caller when it parks) but keeps
// its values. p must have begun (Begin, no token). The goroutine ends
// when run returns; p then leaves its lane.
func (t *Table[R]) Run(ctx context.Context, p *Call[R], run func(context.Context) Outcome[R]) {
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	go func() {
		defer cancel()
		o := run(callCtx)
		t.finish(p, o)
		p.done <- o
		close(p.ended)
	}()
}

// Waited is how a wait for a call ended: it returned (Outcome), asked a
// Question, ran past the limit (TimedOut: it was cancelled and has
// ended), or the caller's context ended (Cancelled: the call was
// cancelled, and Outcome is what it then returned).
type Waited[R any] struct {
	Outcome   Outcome[R]
	Question  *Question
	TimedOut  bool
	Cancelled error
}

// Wait waits for p to return or to ask a question, at most limit (none
// when 0).
func (t *Table[R]) Wait(ctx context.Context, p *Call[R], limit time.Duration) Waited[R] {
	var timeout <-chan time.Time
	if limit > 0 {
		tm := time.NewTimer(limit)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case o := <-p.done:
		return Waited[R]{Outcome: o}
	case q := <-p.questions:
		return Waited[R]{Question: q}
	case <-timeout:
		p.cancel()
		<-p.ended
		return Waited[R]{TimedOut: true}
	case <-ctx.Done():
		p.cancel()
		return Waited[R]{Outcome: <-p.done, Cancelled: ctx.Err()}
	}
}

// Park registers p as waiting for the answer to q, the question of
// round round, whose ID is qid. Its park timer closes it when nobody
// answers within the Table's timeout. A call that returned already (the
// server answered it as it asked) parks nothing: the question's record
// keeps what it returned.
func (t *Table[R]) Park(p *Call[R], q *Question, round int, qid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p.round = round
	if p.outcome != nil {
		t.endedAsking(p, qid, *p.outcome)
		return
	}
	p.asked, p.qid = q, qid
	p.lane.parked = true
	p.lane.signal()
	p.timer = time.AfterFunc(t.timeout, func() { t.Expire(p, qid) })
}

// Expire closes p's question qid, if it is still open, when nobody
// answered it in time.
func (t *Table[R]) Expire(p *Call[R], qid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.qid != qid {
		return // answered or closed meanwhile
	}
	t.closeQuestion(p, fmt.Sprintf("nobody answered it within %v (Options.ParkTimeout); the server was told \"cancel\"", t.timeout))
	t.log.Info("a parked tool call got no answer in time; its question was cancelled", "tool", p.Tool, "after", t.timeout)
}

// CloseQuestions closes every open question without the user's answer,
// recording why: each server waiting for one is told "cancel". It
// returns the channels closed when each call told so has returned (at
// most CloseGrace later: the call is cancelled then), so that the caller
// can let those answers reach their servers before it closes the
// connections.
func (t *Table[R]) CloseQuestions(why string) []<-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ended []<-chan struct{}
	for _, p := range t.parks {
		if p.asked != nil {
			t.closeQuestion(p, why)
			ended = append(ended, p.ended)
		}
	}
	return ended
}

// Lookup returns the call in flight with id, or nil.
func (t *Table[R]) Lookup(id string) *Call[R] {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.parks[id]
}

// Status is what a resume of a parked call's question finds.
type Status int

const (
	// Open: the question is the one the call waits on.
	Open Status = iota
	// OtherPrincipal: the call was made for another principal.
	OtherPrincipal
	// NotOpen: the question is not (or no longer) open; Running says
	// whether its call is still in flight.
	NotOpen
)

// Found is what a resume of question qid of call parkID finds.
type Found struct {
	Status  Status
	Running bool
}

// find looks up call parkID for question qid of principal; t.mu is held.
func (t *Table[R]) find(parkID, principal, qid string) (*Call[R], Found) {
	p := t.parks[parkID]
	switch {
	case p != nil && p.Principal != principal:
		return nil, Found{Status: OtherPrincipal}
	case p == nil || qid == "" || p.qid != qid:
		return nil, Found{Status: NotOpen, Running: p != nil}
	}
	return p, Found{Status: Open}
}

// Answer hands a to call parkID waiting on question qid of principal,
// recording action as the answer taken, and returns the call to Wait on
// when the question was open.
func (t *Table[R]) Answer(parkID, principal, qid, action string, a *mcp.ElicitResult) (*Call[R], Found) {
	t.mu.Lock()
	p, f := t.find(parkID, principal, qid)
	if f.Status != Open {
		t.mu.Unlock()
		return nil, f
	}
	t.book.add(p.Principal, qid, &Record[R]{Server: p.Server, Tool: p.Tool, Round: p.round, Action: action})
	q := p.asked
	p.asked, p.qid = nil, ""
	p.timer.Stop()
	p.lane.parked = false
	p.lane.signal()
	t.mu.Unlock()
	q.answer <- a
	return p, f
}

// PassOver says that question qid of call parkID was resumed without an
// answer it could take: the calls queued behind it stop waiting for one.
func (t *Table[R]) PassOver(parkID, principal, qid string) Found {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, f := t.find(parkID, principal, qid)
	if f.Status == Open {
		p.lane.signal()
	}
	return f
}

// Asked says what a server's elicitation found: the call in flight on
// its connection (nil: none), and whether its user moved on (a question
// of it was closed).
func (t *Table[R]) Asked(cs *mcp.ClientSession) (p *Call[R], closed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.lanes[cs]; l != nil {
		p = l.current
	}
	return p, p != nil && p.closed != ""
}

// Elicit hands the question params to p, the call that asked it, and
// waits for the answer. When p ends first, the answer is "cancel".
func (t *Table[R]) Elicit(ctx context.Context, p *Call[R], params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	q := &Question{Params: params, answer: make(chan *mcp.ElicitResult, 1)}
	cancelled := &mcp.ElicitResult{Action: "cancel"}
	select {
	case p.questions <- q:
	case <-p.ended:
		return cancelled, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-p.ended:
		return cancelled, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
