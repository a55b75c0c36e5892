package mcpadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On a handshake-era connection the server asks its question with an
// elicitation/create request while the tool call is open, and nothing in
// that request says which call asked. So in ElicitInterrupt mode a client
// lets one call at a time be in flight (its lane); the others queue. When
// the call in flight asks a question, it is parked: it stays open in this
// process, its Tool.Call returns an *InputRequiredError, and Tool.Resume
// hands the answer to the waiting server.
//
// A call that comes while the call in flight is parked (call B behind
// call A) cannot wait in Tool.Call: A's answer may come only after B has
// returned, because an agent framework such as eino collects every tool
// call of a turn before it shows the user any question. So B returns an
// *InputRequiredError that asks nothing (PendingCall.Queued records the
// state of the lane it saw), and runs when resumed. Resumed, B waits until
// that state changes: A's answer is handed over (B then waits for A to
// finish, and runs), A is passed over (Resume without answers, or with
// answers that do not fit), or A ends. B comes back as another empty
// interrupt only when A is parked again (a new question, or the same one
// unanswered), that is when A interrupts again too.
//
// This cannot deadlock a framework that resumes A and B at once and waits
// for both, as eino's parallel tool node does: B waits only for something
// A's resume always does, whatever the answer, and A never waits for B.
// The eino binding resumes a call that asks nothing by itself, and passes
// over A when the user did not answer it. A Tool API caller resumes B
// together with A or after it; B resumed alone waits for A's answer, at
// most ParkTimeout (or until ctx ends).

// question is one elicitation/create waiting for the user.
type question struct {
	params *mcp.ElicitParams
	answer chan *mcp.ElicitResult // buffered: the handler may have given up
}

// parkedCall is a call in flight on the lane, with its own goroutine.
type parkedCall struct {
	id        string
	questions chan *question
	done      chan callOutcome // buffered
	ended     chan struct{}    // closed when the call has returned
	cancel    context.CancelFunc

	// Set while parked.
	asked *question
	timer *time.Timer
}

type callOutcome struct {
	res *Result
	err error
}

// lane admits one call at a time.
type lane struct {
	mu      sync.Mutex
	current *parkedCall
	parked  bool
	epoch   uint64        // counts the changes, for the tokens of queued calls
	changed chan struct{} // closed and replaced on every change
}

func (l *lane) init() { l.changed = make(chan struct{}) }

func (l *lane) signal() {
	l.epoch++
	close(l.changed)
	l.changed = make(chan struct{})
}

// token names the lane's state for a call queued behind a parked call.
func (l *lane) token() string { return fmt.Sprintf("%s.%d", l.current.id, l.epoch) }

// enter makes p the call in flight. When the call in flight is parked it
// returns at once with the lane's token instead, unless the lane is still
// in the state after names (the token a queued call got before): then it
// waits for a change.
func (l *lane) enter(ctx context.Context, p *parkedCall, after string) (queued string, err error) {
	for {
		l.mu.Lock()
		if l.current == nil {
			l.current = p
			l.signal()
			l.mu.Unlock()
			return "", nil
		}
		if l.parked {
			if tok := l.token(); tok != after {
				l.mu.Unlock()
				return tok, nil
			}
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func (l *lane) leave(p *parkedCall) {
	l.mu.Lock()
	if l.current == p {
		l.current, l.parked = nil, false
		l.signal()
	}
	l.mu.Unlock()
}

func (l *lane) setParked(p *parkedCall, parked bool) {
	l.mu.Lock()
	if l.current == p {
		l.parked = parked
		l.signal()
	}
	l.mu.Unlock()
}

// passOver records that the parked call id was resumed without an answer
// it could take, so that the calls queued behind it stop waiting for one.
func (l *lane) passOver(id string) {
	l.mu.Lock()
	if l.current != nil && l.current.id == id && l.parked {
		l.signal()
	}
	l.mu.Unlock()
}

func (l *lane) inFlight() *parkedCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current
}

// parkRegistry holds the parked calls of a client by id.
type parkRegistry struct {
	mu    sync.Mutex
	calls map[string]*parkedCall
}

func (r *parkRegistry) init() { r.calls = make(map[string]*parkedCall) }

func (r *parkRegistry) put(p *parkedCall) {
	r.mu.Lock()
	r.calls[p.id] = p
	r.mu.Unlock()
}

// take removes and returns the parked call with id, or nil.
func (r *parkRegistry) take(id string) *parkedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.calls[id]
	delete(r.calls, id)
	return p
}

func newParkID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// onElicit is the elicitation handler of an ElicitInterrupt client: it
// hands the question to the call in flight and waits for the answer.
func (c *Client) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p := c.interrupt.lane.inFlight()
	if p == nil {
		// Not asked by a tool call of ours: nobody can answer.
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

// callParked makes a handshake-era call that may be parked. after is the
// token of a queued call being resumed, or "".
func (c *Client) callParked(ctx context.Context, pc *PendingCall, tc *toolCall, after string) (*Result, error) {
	st := c.interrupt
	p := &parkedCall{id: newParkID(), questions: make(chan *question), done: make(chan callOutcome, 1), ended: make(chan struct{})}
	queued, err := st.lane.enter(ctx, p, after)
	if err != nil {
		return nil, c.transportError(nil, "tools/call", pc.Tool, err)
	}
	if queued != "" {
		// Queued behind a parked call: ask nothing, run on resume.
		return nil, &InputRequiredError{Pending: &PendingCall{Server: pc.Server, Tool: pc.Tool, ModelTool: pc.ModelTool,
			Arguments: pc.Arguments, Queued: queued, Round: pc.Round}}
	}
	// The call outlives this Tool.Call when it parks.
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	go func() {
		defer st.lane.leave(p)
		defer close(p.ended)
		defer cancel()
		// A task's questions come while tasks/result waits (task.go).
		if r, err, ok := c.callAsTask(callCtx, tc); ok {
			p.done <- callOutcome{r, err}
			return
		}
		// No request timeout here: the call may wait for a person.
		// waitParked bounds each wait for the server instead.
		res, err := c.sendCall(callCtx, tc, &mcp.CallToolParams{Name: pc.Tool, Arguments: pc.Arguments}, 0)
		if err != nil {
			r, err := c.callFailed(pc, err)
			p.done <- callOutcome{r, err}
			return
		}
		r, err := convertResult(c.name, pc.Tool, res)
		p.done <- callOutcome{r, err}
	}()
	return c.waitParked(ctx, p, pc)
}

// waitParked waits for the call in flight to finish or to ask a question,
// at most ClientOptions.Timeout (when set) for each wait.
func (c *Client) waitParked(ctx context.Context, p *parkedCall, pc *PendingCall) (*Result, error) {
	var timeout <-chan time.Time
	if c.opts.Timeout > 0 {
		t := time.NewTimer(c.opts.Timeout)
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
		return nil, c.transportError(nil, "tools/call", pc.Tool, fmt.Errorf("no answer within %v (ClientOptions.Timeout): %w", c.opts.Timeout, context.DeadlineExceeded))
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

// park registers p as waiting for the answer to q and returns the
// interrupt for it.
func (c *Client) park(p *parkedCall, q *question, pc *PendingCall) error {
	st := c.interrupt
	p.asked = q
	st.lane.setParked(p, true)
	st.parks.put(p)
	p.timer = time.AfterFunc(st.parkTimeout, func() {
		if st.parks.take(p.id) == nil {
			return // resumed meanwhile
		}
		q.answer <- &mcp.ElicitResult{Action: string(elicitation.Cancel)}
		p.cancel()
		c.log.Info("a parked tool call got no answer in time; its question was cancelled", "tool", pc.Tool, "after", st.parkTimeout)
	})
	next := &PendingCall{Server: pc.Server, Tool: pc.Tool, ModelTool: pc.ModelTool, Arguments: pc.Arguments,
		ParkID: p.id, Round: pc.Round + 1, Requests: []elicitation.Request{requestFrom(fmt.Sprintf("elicitation-%d", pc.Round+1), q.params)}}
	return &InputRequiredError{Pending: next}
}

// resumeParked hands the answers to a parked call and waits for what it
// does next.
func (c *Client) resumeParked(ctx context.Context, pending *PendingCall, answers map[string]elicitation.Response) (*Result, error) {
	st := c.interrupt
	if len(pending.Requests) == 0 {
		return nil, errors.New("mcpadapter: Resume: a parked call without its question")
	}
	p := st.parks.take(pending.ParkID)
	if p == nil {
		return errorResult(fmt.Sprintf("The call to tool %q that was waiting for the user's answer no longer exists: it was abandoned after %v without an answer, or this process restarted. Call the tool again.",
			pending.ModelTool, st.parkTimeout)), nil
	}
	p.timer.Stop()
	select {
	case o := <-p.done:
		// The call ended while it waited (connection lost, server gave up).
		if o.err != nil {
			msg, _, _ := strings.Cut(o.err.Error(), "\n")
			return errorResult(fmt.Sprintf("The call to tool %q ended while it waited for the user's answer: %s. Call the tool again.", pending.ModelTool, msg)), nil
		}
		return o.res, nil
	default:
	}
	a := answers[pending.Requests[0].Key]
	p.asked.answer <- &mcp.ElicitResult{Action: string(a.Action), Content: a.Content}
	p.asked = nil
	st.lane.setParked(p, false)
	if a.Action == elicitation.Cancel {
		p.cancel()
		return errorResult(fmt.Sprintf("The user cancelled the call to tool %q.", pending.ModelTool)), nil
	}
	return c.waitParked(ctx, p, pending)
}
