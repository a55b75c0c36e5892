package mcpadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On a handshake-era connection the server asks its question with an
// elicitation/create request while the tool call is open, and nothing in
// that request says which call asked. So in ElicitInterrupt mode a client
// lets one call at a time be in flight on each such connection (its
// lane); the others wait. When the call in flight asks a question, it is
// parked: it stays open in this process, its Tool.Call returns an
// *InputRequiredError, and Tool.Resume hands the answer to the waiting
// server.
//
// What a call that comes while the call in flight is parked (call B
// behind call A) does depends on whose it is:
//
//   - The same run (WithRun: the model's calls of one turn, and their
//     resumes). B cannot wait in Tool.Call: A's answer may come only
//     after B has returned, because an agent framework collects every
//     tool call of a turn before it shows the user any question. So B
//     returns an *InputRequiredError that asks nothing (PendingCall.Queued
//     records the state of the lane it saw), and runs when resumed.
//     Resumed, B waits until that state changes: A's answer is handed over
//     (B then waits for A to finish, and runs), A is passed over (Resume
//     without answers, or with answers that do not fit), or A ends. B
//     comes back as another empty interrupt only when A is parked again (a
//     new question, or the same one unanswered), that is when A
//     interrupts again too.
//   - Another run of the same principal: the user moved on without
//     answering A. A's question is closed: the server is told "cancel"
//     and A's request is cancelled, A's PendingCall is refused from then
//     on (*AnsweredError), and B runs as soon as A has ended.
//   - Another principal: B cannot run beside A on one connection (its
//     questions could not be told from A's), and must not wait for
//     another user's answer: it fails at once with a *TransportError.
//     With one connection per principal this does not arise.
//
// Queueing cannot deadlock a framework that resumes A and B at once and
// waits for both, as eino's parallel tool node does: B waits only for
// something A's resume always does, whatever the answer, and A never
// waits for B.
//
// Every question has its own ID (PendingCall.ID): it takes one answer,
// checked against the question the call is waiting on, and the park
// timer of one question closes that question only.

// question is one elicitation/create waiting for the user.
type question struct {
	params *mcp.ElicitParams
	answer chan *mcp.ElicitResult // buffered: one answer, whoever gives it
}

// parkedCall is a call in flight on a lane, with its own goroutine.
type parkedCall struct {
	id, server, tool string
	principal, run   string
	lane             *lane
	questions        chan *question
	done             chan callOutcome // buffered
	ended            chan struct{}    // closed when the call has returned
	cancel           context.CancelFunc

	// Guarded by interruptState.mu.
	round  int       // the round of the last question asked
	asked  *question // the open question, or nil
	qid    string    // the open question's PendingCall.ID
	closed string    // the PendingCall.ID of the question closed without an answer, if any
	timer  *time.Timer
}

type callOutcome struct {
	res *Result
	err error
}

// lane admits one call at a time on one connection. Its fields are
// guarded by interruptState.mu.
type lane struct {
	cs      *mcp.ClientSession
	users   int // calls in it or entering it
	current *parkedCall
	parked  bool
	epoch   uint64        // counts the changes, for the tokens of queued calls
	changed chan struct{} // closed and replaced on every change
}

func (l *lane) signal() {
	l.epoch++
	close(l.changed)
	l.changed = make(chan struct{})
}

// token names the lane's state for a call queued behind a parked call.
func (l *lane) token() string { return fmt.Sprintf("%s.%d", l.current.id, l.epoch) }

// errOtherPrincipal refuses a call on a connection whose call in flight,
// made for another principal, waits for its user's answer.
var errOtherPrincipal = errors.New("the server's connection is waiting for another principal's answer to a question; a handshake-era server's questions cannot be told apart on one connection, so this call cannot run beside it (use one connection per principal)")

// errLaneMoved refuses to send a parked call on another connection than
// its lane's (the engine replaced a lost one): a question asked there
// would reach no call. Nothing was sent; callInterruptibleAfter makes the
// call again in a lane of the new connection.
var errLaneMoved = errors.New("the server's connection was replaced before the call was sent")

// acquire returns the lane of cs, with one more user.
func (st *interruptState) acquire(cs *mcp.ClientSession) *lane {
	st.mu.Lock()
	defer st.mu.Unlock()
	l := st.lanes[cs]
	if l == nil {
		l = &lane{cs: cs, changed: make(chan struct{})}
		st.lanes[cs] = l
	}
	l.users++
	return l
}

// drop removes a user of l; st.mu is held.
func (st *interruptState) drop(l *lane) {
	l.users--
	if l.users == 0 && l.current == nil {
		delete(st.lanes, l.cs)
	}
}

// enter makes p the call in flight of l. When the call in flight is
// parked it returns at once with the lane's token instead (see the top of
// this file), unless the lane is still in the state after names (the
// token a queued call got before): then it waits for a change.
func (c *Client) enter(ctx context.Context, l *lane, p *parkedCall, after string) (queued string, err error) {
	st := c.interrupt
	for {
		st.mu.Lock()
		if l.current == nil {
			l.current = p
			l.signal()
			st.parks[p.id] = p
			st.mu.Unlock()
			return "", nil
		}
		if a := l.current; l.parked {
			switch {
			case a.principal != p.principal:
				st.mu.Unlock()
				return "", errOtherPrincipal
			case !sameRun(a.run, p.run):
				c.log.Info("a question nobody answered was closed: another call of the same user was made on its connection", "tool", a.tool, "round", a.round)
				st.closeQuestion(a, fmt.Sprintf("the user moved on: a call of another run (to %q) was made on the same connection before it was answered; the server was told \"cancel\"", p.tool))
			default:
				if tok := l.token(); tok != after {
					st.mu.Unlock()
					return tok, nil
				}
			}
		}
		ch := l.changed
		st.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// closeGrace is how long a call whose question was closed has to end
// after the server was told "cancel", before its request is cancelled too.
const closeGrace = 5 * time.Second

// closeQuestion closes p's open question without the user's answer: the
// server is told "cancel", and its request is cancelled if it has not
// ended closeGrace later. st.mu is held.
func (st *interruptState) closeQuestion(p *parkedCall, why string) {
	st.answers.add(p.principal, p.qid, &answerRecord{server: p.server, tool: p.tool, round: p.round, reason: why})
	p.asked.answer <- &mcp.ElicitResult{Action: string(elicitation.Cancel)}
	p.asked, p.closed, p.qid = nil, p.qid, ""
	if p.timer != nil {
		p.timer.Stop()
	}
	p.lane.parked = false
	p.lane.signal()
	p.timer = time.AfterFunc(closeGrace, p.cancel)
}

// finish takes p, which has returned o, out of its lane.
func (st *interruptState) finish(p *parkedCall, o callOutcome) {
	st.mu.Lock()
	defer st.mu.Unlock()
	l := p.lane
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.asked != nil {
		// It ended while it waited for the user: the server answered the
		// call without the answer, or the connection was lost.
		r := &answerRecord{server: p.server, tool: p.tool, round: p.round}
		if o.err == nil {
			r.reason, r.now, r.result = "the server answered the call before it was answered", outcomeText(o.res, nil), o.res
		} else {
			r.ended, _, _ = strings.Cut(o.err.Error(), "\n")
		}
		st.answers.add(p.principal, p.qid, r)
		p.asked, p.qid = nil, ""
	}
	if r := st.answers.get(p.principal, p.closed); r != nil {
		r.now = outcomeText(o.res, o.err) // what the server did after "cancel"
	}
	if l.current == p {
		l.current, l.parked = nil, false
		l.signal()
	}
	delete(st.parks, p.id)
	st.drop(l)
}

func newParkID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// onElicit is the elicitation handler of an ElicitInterrupt client: it
// hands the question to the call in flight on the connection that asks,
// and waits for the answer.
func (c *Client) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	st := c.interrupt
	st.mu.Lock()
	var p *parkedCall
	if l := st.lanes[req.Session]; l != nil {
		p = l.current
	}
	closed := p != nil && p.closed != ""
	st.mu.Unlock()
	if closed {
		// Its user moved on: every further question is cancelled at once.
		return &mcp.ElicitResult{Action: string(elicitation.Cancel)}, nil
	}
	if p == nil {
		// Not asked by a tool call of ours: nobody can answer.
		c.log.Debug("an elicitation came with no tool call in flight on its connection; declined")
		return &mcp.ElicitResult{Action: string(elicitation.Decline)}, nil
	}
	if err := webPage(req.Params.URL); err != nil {
		c.log.Warn("a server asked to send the user to a URL that is not a web page; declined", "tool", p.tool, "url", err)
		return &mcp.ElicitResult{Action: string(elicitation.Decline)}, nil
	}
	q := &question{params: req.Params, answer: make(chan *mcp.ElicitResult, 1)}
	cancelled := &mcp.ElicitResult{Action: string(elicitation.Cancel)}
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

// callParked makes a handshake-era call on s that may be parked. after is
// the token of a queued call being resumed, or "".
func (c *Client) callParked(ctx context.Context, s *engine.Session, pc *PendingCall, tc *toolCall, after string) (*Result, error) {
	st := c.interrupt
	l := st.acquire(s.SDK())
	tc.lane = s.SDK()
	p := &parkedCall{id: newParkID(), server: c.name, tool: tc.tool, principal: tc.principal, run: tc.run, lane: l, round: pc.Round,
		questions: make(chan *question), done: make(chan callOutcome, 1), ended: make(chan struct{})}
	queued, err := c.enter(ctx, l, p, after)
	if err != nil || queued != "" {
		st.mu.Lock()
		st.drop(l)
		st.mu.Unlock()
		if err != nil {
			return nil, c.transportError(nil, "tools/call", pc.Tool, err)
		}
		// Queued behind a parked call of its run: ask nothing, run on resume.
		q := pc.next()
		q.Round, q.Queued = pc.Round, queued
		return nil, &InputRequiredError{Pending: q}
	}
	// The call outlives this Tool.Call when it parks.
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	go func() {
		defer cancel()
		o := c.runParked(callCtx, pc, tc)
		st.finish(p, o)
		p.done <- o
		close(p.ended)
	}()
	return c.waitParked(ctx, p, pc, tc)
}

// runParked makes the call of a parked call.
func (c *Client) runParked(ctx context.Context, pc *PendingCall, tc *toolCall) callOutcome {
	// A task's questions come while tasks/result waits (task.go).
	if r, err, ok := c.callAsTask(ctx, tc); ok {
		return callOutcome{r, err}
	}
	// No request timeout here: the call may wait for a person.
	// waitParked bounds each wait for the server instead.
	res, err := c.sendCall(ctx, tc, &mcp.CallToolParams{Name: pc.Tool, Arguments: tc.args}, 0)
	if err != nil {
		r, err := c.callFailed(pc, err)
		return callOutcome{r, err}
	}
	r, err := convertResult(c.name, pc.Tool, res)
	return callOutcome{r, err}
}

// waitParked waits for the call in flight to finish or to ask a question,
// at most the call's timeout (its own, the tool's, or
// ClientOptions.Timeout) for each wait. pc is the question answered last.
func (c *Client) waitParked(ctx context.Context, p *parkedCall, pc *PendingCall, tc *toolCall) (*Result, error) {
	limit, from := tc.timeouts.Timeout, tc.timeouts.TimeoutFrom
	if limit <= 0 {
		limit, from = c.opts.Timeout, "ClientOptions.Timeout"
	}
	var timeout <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case o := <-p.done:
		return o.res, o.err
	case q := <-p.questions:
		return nil, c.park(p, q, pc)
	case <-timeout:
		p.cancel()
		<-p.ended
		return nil, c.transportError(nil, "tools/call", pc.Tool, &TimeoutError{Kind: TimeoutRequest, Limit: limit, Setting: from})
	case <-ctx.Done():
		p.cancel()
		o := <-p.done
		var tce *TaskCancelledError
		if o.err == nil || errors.As(o.err, &tce) {
			return o.res, o.err
		}
		return nil, c.transportError(nil, "tools/call", pc.Tool, ctx.Err())
	}
}

// park registers p as waiting for the answer to q, the question after
// pc's, and returns the interrupt for it.
func (c *Client) park(p *parkedCall, q *question, pc *PendingCall) error {
	st := c.interrupt
	next := pc.next()
	next.ParkID = p.id
	next.Requests = []elicitation.Request{requestFrom(fmt.Sprintf("elicitation-%d", next.Round), q.params)}
	st.mu.Lock()
	p.round, p.asked, p.qid = next.Round, q, next.ID
	p.lane.parked = true
	p.lane.signal()
	p.timer = time.AfterFunc(st.parkTimeout, func() { c.expire(p, next.ID) })
	st.mu.Unlock()
	return &InputRequiredError{Pending: next}
}

// expire closes p's question qid, if it is still open, when nobody
// answered it in time.
func (c *Client) expire(p *parkedCall, qid string) {
	st := c.interrupt
	st.mu.Lock()
	defer st.mu.Unlock()
	if p.qid != qid {
		return // answered or closed meanwhile
	}
	st.closeQuestion(p, fmt.Sprintf("nobody answered it within %v (Options.ParkTimeout); the server was told \"cancel\"", st.parkTimeout))
	c.log.Info("a parked tool call got no answer in time; its question was cancelled", "tool", p.tool, "after", st.parkTimeout)
}

// resumeParked hands the answers to a parked call and waits for what it
// does next.
func (c *Client) resumeParked(ctx context.Context, pending *PendingCall, answers map[string]elicitation.Response, tc *toolCall) (*Result, error) {
	st := c.interrupt
	if len(pending.Requests) == 0 {
		return nil, errors.New("mcpadapter: Resume: a parked call without its question")
	}
	st.mu.Lock()
	p := st.parks[pending.ParkID]
	if p != nil && p.principal != pending.Principal {
		st.mu.Unlock()
		return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedPrincipal,
			Detail: "the parked call was made for another principal"}
	}
	if p == nil || pending.ID == "" || p.qid != pending.ID {
		st.mu.Unlock()
		return c.notOpen(pending, p)
	}
	a := answers[pending.Requests[0].Key]
	st.answers.add(p.principal, pending.ID, &answerRecord{server: p.server, tool: p.tool, round: p.round, action: a.Action})
	q := p.asked
	p.asked, p.qid = nil, ""
	p.timer.Stop()
	p.lane.parked = false
	p.lane.signal()
	st.mu.Unlock()
	q.answer <- &mcp.ElicitResult{Action: string(a.Action), Content: a.Content}
	res, err := c.waitParked(ctx, p, pending, tc)
	c.settle(pending, res, err)
	return res, err
}

// notOpen answers a resume of a parked call's question that is not the
// one it waits on; p is the call, if it is still running.
func (c *Client) notOpen(pending *PendingCall, p *parkedCall) (*Result, error) {
	st := c.interrupt
	st.mu.Lock()
	r := st.answers.get(pending.Principal, pending.ID)
	var rec answerRecord
	if r != nil {
		rec = *r
		r.result = nil // returned once
	}
	st.mu.Unlock()
	switch {
	case rec.result != nil:
		return rec.result, nil
	case r != nil && rec.ended != "":
		return errorResult(fmt.Sprintf("The call to tool %q ended while it waited for the user's answer: %s. Call the tool again.", pending.ModelTool, rec.ended)), nil
	case r != nil:
		return nil, rec.err(pending.ID)
	case p != nil:
		return nil, &AnsweredError{Server: pending.Server, Tool: pending.Tool, Question: pending.ID, Round: pending.Round,
			Closed: "it is not the question the call waits on"}
	}
	return errorResult(fmt.Sprintf("The call to tool %q that was waiting for the user's answer is not known to this process: the process restarted since, or the call ended long ago. Whether it ran is not known here: check before calling the tool again.", pending.ModelTool)), nil
}

// passOver says that pending was resumed without an answer it could
// take. The calls queued behind it stop waiting for one. It returns what
// such a resume returns: pending's *InputRequiredError while its question
// is open, else what became of it.
func (c *Client) passOver(pending *PendingCall) (*Result, error) {
	st := c.interrupt
	st.mu.Lock()
	if pending.ParkID == "" {
		r := st.answers.get(pending.Principal, pending.ID)
		st.mu.Unlock()
		if r != nil {
			return nil, r.err(pending.ID)
		}
		return nil, &InputRequiredError{Pending: pending}
	}
	p := st.parks[pending.ParkID]
	if p != nil && p.principal != pending.Principal {
		st.mu.Unlock()
		return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedPrincipal,
			Detail: "the parked call was made for another principal"}
	}
	if p != nil && pending.ID != "" && p.qid == pending.ID {
		p.lane.signal()
		st.mu.Unlock()
		return nil, &InputRequiredError{Pending: pending}
	}
	st.mu.Unlock()
	return c.notOpen(pending, p)
}
