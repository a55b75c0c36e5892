package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/park"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On a handshake-era connection the server asks its question with an
// elicitation/create request while the tool call is open, and nothing in
// that request says which call asked. So in ElicitInterrupt mode a client
// lets one call at a time be in flight on each such connection (its
// lane; internal/park keeps them); the others wait. When the call in
// flight asks a question, it is parked: it stays open in this process,
// its Tool.Call returns an *InputRequiredError, and Tool.Resume hands the
// answer to the waiting server.
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
// Every question has its own ID (PendingCall.ID): it takes one answer,
// checked against the question the call is waiting on, and the park
// timer of one question closes that question only.

// parkedCall is a call in flight on a lane.
type parkedCall = park.Call[*Result]

// errLaneMoved refuses to send a parked call on another connection than
// its lane's (the engine replaced a lost one); callInterruptibleAfter
// makes the call again in a lane of the new connection.
var errLaneMoved = park.ErrLaneMoved

func newParkID() string { return park.NewID() }

// onElicit is the elicitation handler of an ElicitInterrupt client: it
// hands the question to the call in flight on the connection that asks,
// and waits for the answer.
func (c *Client) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p, closed := c.interrupt.Asked(req.Session)
	if closed {
		// Its user moved on: every further question is cancelled at once.
		return &mcp.ElicitResult{Action: string(elicitation.Cancel)}, nil
	}
	if p == nil {
		// Not asked by a tool call of ours: nobody can answer.
		c.log.Debug("an elicitation came with no tool call in flight on its connection; declined")
		return &mcp.ElicitResult{Action: string(elicitation.Decline)}, nil
	}
	if err := inputwire.WebPage(req.Params.URL); err != nil {
		c.log.Warn("a server asked to send the user to a URL that is not a web page; declined", "tool", p.Tool, "url", err)
		return &mcp.ElicitResult{Action: string(elicitation.Decline)}, nil
	}
	return c.interrupt.Elicit(ctx, p, req.Params)
}

// callParked makes a handshake-era call on s that may be parked. after is
// the token of a queued call being resumed, or "".
func (c *Client) callParked(ctx context.Context, s *engine.Session, pc *PendingCall, tc *toolCall, after string) (*Result, error) {
	tc.lane = s.SDK()
	p := park.NewCall[*Result](c.name, tc.tool, tc.principal, tc.run, pc.Round)
	queued, err := c.interrupt.Begin(ctx, s.SDK(), p, after)
	if err != nil {
		return nil, c.transportError(nil, "tools/call", pc.Tool, err)
	}
	if queued != "" {
		// Queued behind a parked call of its run: ask nothing, run on resume.
		q := pc.next()
		q.Round, q.Queued = pc.Round, queued
		return nil, &InputRequiredError{Pending: q}
	}
	c.interrupt.Run(ctx, p, func(ctx context.Context) park.Outcome[*Result] {
		r, err := c.runParked(ctx, pc, tc)
		return park.Outcome[*Result]{Res: r, Err: err}
	})
	return c.waitParked(ctx, p, pc, tc)
}

// runParked makes the call of a parked call.
func (c *Client) runParked(ctx context.Context, pc *PendingCall, tc *toolCall) (*Result, error) {
	// A task's questions come while tasks/result waits (task.go).
	if r, err, ok := c.callAsTask(ctx, tc); ok {
		return r, err
	}
	// No request timeout here: the call may wait for a person.
	// waitParked bounds each wait for the server instead.
	res, err := c.sendCall(ctx, tc, &mcp.CallToolParams{Name: pc.Tool, Arguments: tc.args}, 0)
	if err != nil {
		return c.callFailed(pc, err)
	}
	return convertResult(c.name, pc.Tool, res)
}

// waitParked waits for the call in flight to finish or to ask a question,
// at most the call's timeout (its own, the tool's, or
// ClientOptions.Timeout) for each wait. pc is the question answered last.
func (c *Client) waitParked(ctx context.Context, p *parkedCall, pc *PendingCall, tc *toolCall) (*Result, error) {
	limit, from := tc.timeouts.Timeout, tc.timeouts.TimeoutFrom
	if limit <= 0 {
		limit, from = c.opts.Timeout, c.opts.timeoutSetting()
	}
	w := c.interrupt.Wait(ctx, p, limit)
	switch {
	case w.Question != nil:
		next := pc.next()
		next.ParkID = p.ID
		next.Requests = []elicitation.Request{inputwire.Request(fmt.Sprintf("elicitation-%d", next.Round), w.Question.Params)}
		c.interrupt.Park(p, w.Question, next.Round, next.ID)
		return nil, &InputRequiredError{Pending: next}
	case w.TimedOut:
		return nil, c.transportError(nil, "tools/call", pc.Tool, &TimeoutError{Kind: TimeoutRequest, Limit: limit, Setting: from})
	case w.Cancelled != nil:
		var tce *TaskCancelledError
		if w.Outcome.Err == nil || errors.As(w.Outcome.Err, &tce) {
			return w.Outcome.Res, w.Outcome.Err
		}
		return nil, c.transportError(nil, "tools/call", pc.Tool, w.Cancelled)
	}
	return w.Outcome.Res, w.Outcome.Err
}

// resumeParked hands the answers to a parked call and waits for what it
// does next.
func (c *Client) resumeParked(ctx context.Context, pending *PendingCall, answers map[string]elicitation.Response, tc *toolCall) (*Result, error) {
	if len(pending.Requests) == 0 {
		return nil, errors.New("mcpadapter: Resume: a parked call without its question")
	}
	a := answers[pending.Requests[0].Key]
	p, f := c.interrupt.Answer(pending.ParkID, pending.Principal, pending.ID, string(a.Action),
		&mcp.ElicitResult{Action: string(a.Action), Content: a.Content})
	if f.Status != park.Open {
		return c.notOpen(pending, f)
	}
	res, err := c.waitParked(ctx, p, pending, tc)
	c.settle(pending, res, err)
	return res, err
}

// notOpen answers a resume of a parked call's question that is not the
// one it waits on, as f found it.
func (c *Client) notOpen(pending *PendingCall, f park.Found) (*Result, error) {
	if f.Status == park.OtherPrincipal {
		return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedPrincipal,
			Detail: "the parked call was made for another principal"}
	}
	rec, ok := c.interrupt.Recorded(pending.Principal, pending.ID)
	switch {
	case rec.HasResult && rec.Result != nil:
		return rec.Result, nil
	case ok && rec.Ended != "":
		return errorResult(fmt.Sprintf("The call to tool %q ended while it waited for the user's answer: %s. Call the tool again.", pending.ModelTool, rec.Ended)), nil
	case ok:
		return nil, answeredError(pending.ID, rec)
	case f.Running:
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
	if pending.ParkID == "" {
		if rec, ok := c.interrupt.Recorded(pending.Principal, pending.ID); ok {
			return nil, answeredError(pending.ID, rec)
		}
		return nil, &InputRequiredError{Pending: pending}
	}
	f := c.interrupt.PassOver(pending.ParkID, pending.Principal, pending.ID)
	if f.Status == park.Open {
		return nil, &InputRequiredError{Pending: pending}
	}
	return c.notOpen(pending, f)
}

// closeQuestions tells every server waiting for the user's answer
// "cancel", and waits for their calls to end, at most park.CloseGrace (a
// call is cancelled then).
func (c *Client) closeQuestions() {
	t := time.NewTimer(park.CloseGrace)
	defer t.Stop()
	for _, ended := range c.interrupt.CloseQuestions("the client was closed before it was answered; the server was told \"cancel\"") {
		select {
		case <-ended:
		case <-t.C:
			return
		}
	}
}
