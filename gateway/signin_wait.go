package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handshake-era client that declared URL elicitation is asked to sign
// in mid-call: the gateway sends it an elicitation/create in URL mode
// (the start page's link and an elicitation ID) on the call's stream,
// and once the user accepted waits for the sign-in to complete, here (the
// callback wakes the call) or on another replica (the token store holds
// a new token for the principal), then makes the call with the user's
// token. The question and the wait end with the client's request (its
// cancellation or timeout), with the server (removed by a reload, the
// gateway closed), at Shutdown (CodeShuttingDown: the client makes the
// call again on another instance) and at the link's expiry (SignInOptions.TTL, 10 minutes by default):
// after that the link signs no one in. The client is told that the
// sign-in completed with notifications/elicitation/complete, on the
// call's stream.
//
// A -32042 question (a request that cannot ask mid-call: see
// signInAnswer) is recorded too, with its session: when the sign-in of
// its principal at its server completes on this replica, the session is
// told, on its standalone stream. One that completes on another replica
// tells no -32042 session here: the client makes its request again
// when its user is back.

// signInPoll is how often a call waiting for a sign-in reads the token
// store (a sign-in completed on another replica).
const signInPoll = 500 * time.Millisecond

// maxSignInRounds is how many times one call asks its user to sign in
// mid-call; a call whose server still wants a sign-in after that gets
// the -32042 error.
const maxSignInRounds = 2

// maxSignInWaits caps the questions under way (asked mid-call or in a
// task, or by a -32042 error), and maxSignInWaitsPerPrincipal those of
// one principal (one principal's flood of questions takes no room of the
// others'); past either a call or task is not asked and does not wait (it
// gets the question in an error: signInAnswer), and a -32042 question's
// session is not told when its sign-in completes.
const (
	maxSignInWaits             = 10000
	maxSignInWaitsPerPrincipal = 32
)

// signInWait is a sign-in question asked of a handshake-era session.
type signInWait struct {
	id, principal, server string
	ss                    *mcp.ServerSession
	expires               time.Time
	// inCall: a call waits for it (and tells its client itself); done is
	// closed when the sign-in completed on this replica.
	inCall bool
	done   chan struct{}
}

// signInWaits holds the questions asked, by elicitation ID.
type signInWaits struct {
	mu  sync.Mutex
	m   map[string]*signInWait
	per map[string]int // how many of m are each principal's
}

// add records w, and reports whether it could.
func (s *signInWaits) add(w *signInWait) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m, s.per = make(map[string]*signInWait), make(map[string]int)
	}
	if len(s.m) >= maxSignInWaits || s.per[w.principal] >= maxSignInWaitsPerPrincipal {
		now := time.Now()
		for _, o := range s.m {
			if now.After(o.expires) {
				s.dropLocked(o)
			}
		}
		if len(s.m) >= maxSignInWaits || s.per[w.principal] >= maxSignInWaitsPerPrincipal {
			return false
		}
	}
	s.m[w.id] = w
	s.per[w.principal]++
	return true
}

// dropLocked forgets w; s.mu is held.
func (s *signInWaits) dropLocked(w *signInWait) {
	if s.m[w.id] != w {
		return
	}
	delete(s.m, w.id)
	if s.per[w.principal]--; s.per[w.principal] <= 0 {
		delete(s.per, w.principal)
	}
}

// remove forgets w.
func (s *signInWaits) remove(w *signInWait) {
	s.mu.Lock()
	s.dropLocked(w)
	s.mu.Unlock()
}

// completed takes out the questions of principal at server, every one of
// them: the sign-in answers them all. Those a call waits for are woken.
func (s *signInWaits) completed(principal, server string) []*signInWait {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*signInWait
	now := time.Now()
	for _, w := range s.m {
		switch {
		case w.principal == principal && w.server == server:
			s.dropLocked(w)
			if w.inCall {
				close(w.done)
			}
			out = append(out, w)
		case now.After(w.expires):
			s.dropLocked(w)
		}
	}
	return out
}

// signInCompleted is called when principal completed a sign-in to server
// on this replica: the calls waiting for it go on, and each session asked
// with a -32042 error is told.
func (g *Gateway) signInCompleted(principal, server string) {
	ws := g.signins.completed(principal, server)
	if len(ws) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(g.ctx, 5*time.Second)
	defer cancel()
	for _, w := range ws {
		if w.inCall || w.ss == nil {
			continue
		}
		if err := w.ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: w.id}); err != nil {
			g.log.Debug("a session asked to sign in could not be told the sign-in completed", "server", server, "err", err)
		}
	}
}

// canAskSignInMidCall reports whether the client of o, making a tool
// call, can be asked to sign in mid-call: a handshake-era session that
// declared URL elicitation (its session takes the gateway's requests on
// the call's stream).
func (g *Gateway) canAskSignInMidCall(o *origin) bool {
	if g.pages == nil || o == nil || o.modern || o.caps == nil || o.caps.Elicitation == nil || o.caps.Elicitation.URL == nil {
		return false
	}
	_, ss := o.current()
	return ss != nil
}

// signInMidCall asks the client of o, mid-call, to sign in to u (sr)
// and waits for the sign-in (see the top of this file). It returns nil,
// nil once the user signed in (the call is made again), a result when the
// user declined or cancelled, errAskRefused when the client refused the
// question itself, errNoWaitRoom when the principal has too many under
// way, or an error.
func (g *Gateway) signInMidCall(ctx context.Context, o *origin, u *upstream, sr *mcpadapter.SignInRequiredError) (*mcp.CallToolResult, error) {
	_, ss := o.current()
	w, q, before, err := g.signInQuestion(ctx, u, sr, ss, "your call goes on once you have")
	if err != nil {
		return nil, err
	}
	defer g.signins.remove(w)
	// The question ends with the link's lifetime or ParkTimeout, the
	// sooner, with the server and at Shutdown, as the wait does.
	wait, bound := time.Until(w.expires), "the link's lifetime"
	if park := g.opts.parkTimeout(); park < wait {
		wait, bound = park, "the gateway's park timeout"
	}
	actx, cancel := context.WithDeadline(ctx, w.expires)
	defer cancel()
	actx, cancelBound := g.askBound(actx, "elicitation")
	defer cancelBound()
	stop := context.AfterFunc(u.ctx, cancel)
	defer stop()
	stopDrain := context.AfterFunc(g.drained, cancel)
	defer stopDrain()
	resp, err := o.ask(actx, "elicitation", q)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("server %q: the question to sign in got no answer: %w", u.name, context.Cause(ctx))
		case g.drained.Err() != nil:
			return nil, errShuttingDown()
		case u.ctx.Err() != nil:
			return nil, rpcError(&unavailableError{server: u.name, err: context.Cause(u.ctx)})
		case actx.Err() != nil:
			return nil, &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q: the question to sign in got no answer within %s (%s); make the call again", u.name, wait.Round(time.Second), bound)}
		}
		// The client refused the request (a client that declared URL
		// elicitation and takes no elicitation/create): it gets the
		// -32042 error instead.
		g.log.Debug("a client refused the question to sign in mid-call", "server", u.name, "err", err)
		return nil, errAskRefused
	}
	if res, err := g.signInAccepted(u, resp); res != nil || err != nil {
		return res, err
	}
	if err := g.awaitSignIn(ctx, u, w, before, g.drained.Done()); err != nil {
		return nil, err
	}
	rctx, cancel := o.reqCtx(ctx)
	defer cancel()
	if err := ss.NotifyElicitationComplete(rctx, &mcp.ElicitationCompleteParams{ElicitationID: w.id}); err != nil {
		g.log.Debug("a session asked to sign in could not be told the sign-in completed", "server", u.name, "err", err)
	}
	return nil, nil
}

// signInQuestion makes the URL question of a sign-in of sr's principal to
// u, asked of ss (nil: of no session), and records it as waited for:
// remove it when done. It returns the version of the principal's token
// before the sign-in too (see awaitSignIn).
func (g *Gateway) signInQuestion(ctx context.Context, u *upstream, sr *mcpadapter.SignInRequiredError, ss *mcp.ServerSession, then string) (*signInWait, *mcp.ElicitParams, string, error) {
	before, err := u.web.TokenVersion(ctx, u.webURL, sr.Principal)
	if err != nil {
		g.log.Warn("the token store could not be read before a sign-in", "server", u.name, "principal", sr.Principal, "err", err)
		return nil, nil, "", &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q: you must sign in there, and the gateway cannot read its token store now; try again later", u.name)}
	}
	link, id, err := g.pages.link(sr.Principal, u.name, sr.URL)
	if err != nil {
		g.log.Warn("no sign-in link for a principal", "server", u.name, "principal", sr.Principal, "err", err)
		return nil, nil, "", &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q: you must sign in there, and the gateway could not make the link: %v", u.name, err)}
	}
	w := &signInWait{id: id, principal: sr.Principal, server: u.name, ss: ss, expires: time.Now().Add(g.pages.ttl),
		inCall: true, done: make(chan struct{})}
	if !g.signins.add(w) {
		// Each wait reads the token store twice a second: one
		// principal's flood of them waits in no more than its share.
		g.log.Debug("a principal has too many sign-in questions under way to wait for another", "server", u.name, "principal", sr.Principal)
		return nil, nil, "", errNoWaitRoom
	}
	q := &mcp.ElicitParams{Mode: "url", URL: link, ElicitationID: id,
		Message: fmt.Sprintf("Sign in to %s so that the gateway can use it for you; %s.", u.name, then)}
	return w, q, before, nil
}

// signInAccepted returns nil, nil when resp, the answer to a sign-in
// question, accepted it; the result of the call its user did not sign in
// for when it declined or cancelled; an error naming the answer's action
// (cut short: the client wrote it) when it is none of these.
func (g *Gateway) signInAccepted(u *upstream, resp mcp.InputResponse) (*mcp.CallToolResult, error) {
	r, _ := resp.(*mcp.ElicitResult)
	if r == nil {
		r = &mcp.ElicitResult{}
	}
	switch r.Action {
	case "accept":
		return nil, nil
	case "decline", "cancel":
		return signInRefused(u.name, r.Action), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
		"server %q: the answer to the question to sign in (elicitation/create) is invalid: $.action %.32q is none of accept, decline, cancel", u.name, r.Action)}
}

// signInTask asks the client of task t to sign in to u (sr): the task
// goes input_required with the URL question, in its era's form (a
// 2025-11-25 client gets it as an elicitation/create on its tasks/result,
// a 2026-07-28 client in tasks/get's inputRequests), and once the user
// accepted, waits for the sign-in as a call does, bounded by the task
// (its cancellation) and the link's lifetime. It returns nil, nil once
// the user signed in (the call is made), a result when the user did not.
func (g *Gateway) signInTask(ctx context.Context, t *gwTask, u *upstream, sr *mcpadapter.SignInRequiredError) (*mcp.CallToolResult, error) {
	w, q, before, err := g.signInQuestion(ctx, u, sr, nil, "the task goes on once you have")
	if err != nil {
		return nil, err
	}
	defer g.signins.remove(w)
	actx, cancel := context.WithDeadline(ctx, w.expires)
	defer cancel()
	resp, err := t.ask(actx, q)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q: the question to sign in got no answer within %s (the link's lifetime)", u.name, g.pages.ttl)}
	}
	if res, err := g.signInAccepted(u, resp); res != nil || err != nil {
		return res, err
	}
	if err := g.awaitSignIn(ctx, u, w, before, nil); err != nil {
		return nil, err
	}
	if ss := t.session; ss != nil && !t.ext {
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := ss.NotifyElicitationComplete(nctx, &mcp.ElicitationCompleteParams{ElicitationID: w.id}); err != nil {
			g.log.Debug("a session asked to sign in could not be told the sign-in completed", "server", u.name, "err", err)
		}
	}
	return nil, nil
}

// runTaskSignedIn is runTaskCall for task t (urlAsk: its client takes
// URL-mode questions): when the principal must sign in to the server,
// the task asks (signInTask) and then makes the call; a client that
// takes no URL question gets the task failed with the sign-in's error
// (CodeSignInRequired, the URL in its data). Each call holds one of the
// server's task slots (tasks take half a server's call slots at most:
// calls that wait for their answer always find the other half); a task
// waiting for its user's sign-in holds none.
func (g *Gateway) runTaskSignedIn(ctx context.Context, t *gwTask, urlAsk bool, r toolRoute, args json.RawMessage, onTask func(mcpadapter.TaskHandle)) (*mcp.CallToolResult, error) {
	for round := 1; ; round++ {
		free, err := acquire(ctx, r.u.taskSem)
		if err != nil {
			return nil, err
		}
		res, err := g.runTaskCall(ctx, r, args, mcpadapter.TaskPrefer, onTask)
		free()
		var sn *signInNeeded
		if !errors.As(err, &sn) {
			return res, err
		}
		if !urlAsk || g.pages == nil || round > maxSignInRounds {
			_, err := g.signInAnswer(nil, r.u, sn.sr, false)
			return nil, err
		}
		res, err = g.signInTask(ctx, t, r.u, sn.sr)
		if askedNot(err) {
			_, err := g.signInAnswer(nil, r.u, sn.sr, false)
			return nil, err
		}
		if res != nil || err != nil {
			return res, err
		}
	}
}

// errAskRefused: the client refused the mid-call question (signInMidCall).
var errAskRefused = errors.New("the client refused the question to sign in")

// errNoWaitRoom: the principal has its share of sign-in questions under
// way (maxSignInWaitsPerPrincipal, or all of maxSignInWaits are taken);
// the call is not asked, the client gets the question in an error.
var errNoWaitRoom = errors.New("too many sign-in questions under way")

// askedNot reports whether err (of signInMidCall or signInTask) says that
// the client was not asked, or refused the question: it gets the
// question in an error instead (signInAnswer).
func askedNot(err error) bool {
	return errors.Is(err, errAskRefused) || errors.Is(err, errNoWaitRoom)
}

// awaitSignIn waits until w's sign-in completed: here (w.done), or
// anywhere (the store holds a token for w's principal other than before).
// It ends with CodeShuttingDown when drained is closed (Shutdown; nil for
// a task, which runs on until the gateway closes).
func (g *Gateway) awaitSignIn(ctx context.Context, u *upstream, w *signInWait, before string, drained <-chan struct{}) error {
	tick := time.NewTicker(signInPoll)
	defer tick.Stop()
	limit := time.NewTimer(time.Until(w.expires))
	defer limit.Stop()
	for {
		v, err := u.web.TokenVersion(ctx, u.webURL, w.principal)
		if err == nil && v != "" && v != before {
			return nil
		}
		if err != nil {
			g.log.Debug("the token store could not be read while waiting for a sign-in", "server", u.name, "err", err)
		}
		select {
		case <-w.done:
			return nil
		case <-tick.C:
		case <-limit.C:
			return &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q: the sign-in did not complete within %s (the link's lifetime); make the call again", u.name, g.pages.ttl)}
		case <-drained:
			return errShuttingDown()
		case <-u.ctx.Done():
			return rpcError(&unavailableError{server: u.name, err: context.Cause(u.ctx)})
		case <-ctx.Done():
			return fmt.Errorf("server %q: the call ended while waiting for the sign-in: %w", u.name, context.Cause(ctx))
		}
	}
}

// signInRefused is the result of a call whose user did not sign in
// (action: "decline", "cancel").
func signInRefused(server, action string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
		Text: fmt.Sprintf("The user did not sign in to %s (%s); the call was not made.", server, action)}}}
}
