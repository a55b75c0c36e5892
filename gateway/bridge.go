//lint:file-ignore SA1019 the gateway relays roots, sampling and logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 client's call to a handshake-era server that asks a
// question mid-call is parked: the server's call goes on in a goroutine of
// the gateway, the question goes back to the client as an input_required
// result whose requestState names the parked call, and the client's retry
// with that requestState and its answers hands the answers to the waiting
// server and waits for the call's end or its next question.

// Request states of the gateway's own start with statePrefix; a server's
// request state that happens to start with it (or with upPrefix) travels
// to the client behind upPrefix, so the two never mix.
const (
	statePrefix = "mcpgw:"
	upPrefix    = "mcpup:"
)

// asksRound reports whether res, a server's answer to tools/call,
// prompts/get or resources/read, asks its client for a round of answers:
// input_required, or questions with no resultType (plaincall.Round, the
// rule this library's client follows). A task's questions are no round.
func asksRound(res interface {
	mcp.Result
	NeedsInput() bool
}) bool {
	_, _, round := plaincall.Round(res)
	return res.NeedsInput() || round
}

// wrapState returns a server's request state as the client sees it.
func wrapState(s string) string {
	if strings.HasPrefix(s, statePrefix) || strings.HasPrefix(s, upPrefix) {
		return upPrefix + s
	}
	return s
}

// unwrapState returns what a client's request state is: the id of a call
// parked in the gateway (parked true), or the server's own state.
func unwrapState(s string) (state string, parked bool) {
	switch {
	case strings.HasPrefix(s, statePrefix):
		return strings.TrimPrefix(s, statePrefix), true
	case strings.HasPrefix(s, upPrefix):
		return strings.TrimPrefix(s, upPrefix), false
	}
	return s, false
}

// question is one request of the server waiting for the client's answer.
type question struct {
	id     string
	req    mcp.InputRequest
	answer chan answer // buffered
}

type answer struct {
	resp mcp.InputResponse
	err  error
}

type outcome struct {
	res *mcp.CallToolResult
	err error
}

// parkedCall is a 2026-07-28 client's call running on a handshake-era
// server, in a goroutine of its own.
type parkedCall struct {
	id        string
	principal string
	tool      string // the name clients know the tool by
	o         *origin
	questions chan *question
	done      chan outcome    // buffered
	ctx       context.Context // the call's: its questions end with it
	cancel    context.CancelCauseFunc
	n         int // questions asked so far, for their ids

	mu    sync.Mutex
	asked map[string]*question // the questions of the round in the client's hands
	timer *time.Timer
}

// ask is how the server's handlers reach the client of a parked call;
// the question is withdrawn when the call ends (cancelled, unanswered,
// refused, the gateway closed).
func (p *parkedCall) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	q := &question{req: req, answer: make(chan answer, 1)}
	select {
	case p.questions <- q:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-p.ctx.Done():
		return nil, context.Cause(p.ctx)
	}
	select {
	case a := <-q.answer:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-p.ctx.Done():
		return nil, context.Cause(p.ctx)
	}
}

// parking holds the parked calls by id.
type parking struct {
	mu      sync.Mutex
	calls   map[string]*parkedCall
	timeout time.Duration
}

func newParking(timeout time.Duration) *parking {
	return &parking{calls: make(map[string]*parkedCall), timeout: timeout}
}

// start runs call, a call of the tool clients know as tool, in a
// goroutine as a parked call for o, and returns it. The call's context
// outlives ctx (the client's first request) but keeps its values; it ends
// when the call is cancelled or left unanswered for the park timeout.
func (pk *parking) start(ctx context.Context, o *origin, tool string, call func(context.Context) (*mcp.CallToolResult, error)) *parkedCall {
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	p := &parkedCall{
		id:        newKey(),
		principal: PrincipalFrom(ctx),
		tool:      tool,
		o:         o,
		questions: make(chan *question),
		done:      make(chan outcome, 1),
		ctx:       cctx,
		cancel:    cancel,
	}
	o.mu.Lock()
	o.park = p
	o.mu.Unlock()
	pk.mu.Lock()
	pk.calls[p.id] = p
	pk.mu.Unlock()
	go func() {
		res, err := call(cctx)
		p.done <- outcome{res, err}
		cancel(errCallEnded)
	}()
	return p
}

var errCallEnded = errors.New("the call ended")

// take returns the call parked as id for principal, a call of the tool
// clients know as tool, or nil.
func (pk *parking) take(id, principal, tool string) *parkedCall {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	p := pk.calls[id]
	if p == nil || p.principal != principal || p.tool != tool {
		return nil
	}
	return p
}

// refuse cancels the call parked as id for principal, a call of tool
// (whose use the Policy now refuses it), if there is one.
func (pk *parking) refuse(id, principal, tool string) {
	if p := pk.take(id, principal, tool); p != nil {
		pk.drop(p)
		p.cancel(errRefused)
	}
}

var errRefused = errors.New("the policy no longer lets the principal use the tool")

func (pk *parking) drop(p *parkedCall) {
	pk.mu.Lock()
	if pk.calls[p.id] == p {
		delete(pk.calls, p.id)
	}
	pk.mu.Unlock()
}

// closeAll cancels every parked call (the gateway is closing).
func (pk *parking) closeAll(cause error) {
	pk.mu.Lock()
	calls := pk.calls
	pk.calls = make(map[string]*parkedCall)
	pk.mu.Unlock()
	for _, p := range calls {
		p.cancel(cause)
	}
}

// wait waits, for as long as the client's request ctx lasts, for the
// call's end or its next questions. Questions come back as an
// input_required result naming the parked call.
func (pk *parking) wait(ctx context.Context, p *parkedCall) (*mcp.CallToolResult, error) {
	select {
	case out := <-p.done:
		pk.drop(p)
		return out.res, out.err
	case q := <-p.questions:
		round := []*question{q}
		// Questions asked at once go out in one round.
		for more := true; more; {
			select {
			case q := <-p.questions:
				round = append(round, q)
			default:
				more = false
			}
		}
		return pk.hold(p, round), nil
	case <-ctx.Done():
		pk.drop(p)
		p.cancel(fmt.Errorf("the client's request ended: %w", context.Cause(ctx)))
		return nil, context.Cause(ctx)
	}
}

// hold records a round of questions in the client's hands and returns the
// input_required result that asks them; the call is cancelled if the
// client does not come back within the park timeout.
func (pk *parking) hold(p *parkedCall, round []*question) *mcp.CallToolResult {
	reqs := make(mcp.InputRequestMap, len(round))
	p.mu.Lock()
	if p.asked == nil {
		p.asked = make(map[string]*question)
	}
	for _, q := range round {
		if q.id == "" {
			// Its own id, kept when it is asked again: no other
			// question of this call or of another takes its answer.
			p.n++
			q.id = "q" + strconv.Itoa(p.n) + "-" + newKey()[:8]
		}
		p.asked[q.id] = q
		reqs[q.id] = q.req
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(pk.timeout, func() {
		pk.drop(p)
		p.cancel(fmt.Errorf("no answer came within %s", pk.timeout))
	})
	p.mu.Unlock()
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: statePrefix + p.id}
}

// resume hands a client's answers to the parked call's questions and
// waits for what comes next. Questions left unanswered are asked again,
// under the same ids. A retry when no round is in the client's hands (its
// round was answered, by this retry sent twice or by another, and a
// request waits for what comes next) is refused: only the request that
// answered a round waits for the call.
func (pk *parking) resume(ctx context.Context, p *parkedCall, responses mcp.InputResponseMap) (*mcp.CallToolResult, error) {
	p.mu.Lock()
	if len(p.asked) == 0 {
		p.mu.Unlock()
		return nil, errAnswered()
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	var missing []*question
	for id, q := range p.asked {
		resp, ok := responses[id]
		if !ok {
			missing = append(missing, q)
			continue
		}
		delete(p.asked, id)
		q.answer <- answer{resp: resp}
	}
	p.mu.Unlock()
	if len(missing) > 0 {
		return pk.hold(p, missing), nil
	}
	return pk.wait(ctx, p)
}

// errAnswered answers a retry whose request state names a parked call
// whose questions were answered already.
func errAnswered() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState names a call whose questions were already answered (the answers were sent twice): wait for the request that answered them"}
}

// errUnknownState answers a retry whose request state names no parked
// call: it expired, was answered already, or never existed.
func errUnknownState() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState names no call waiting in the gateway (it expired, was already answered, or was altered): make the call again"}
}

// inputKind says which client capability answers q.
func inputKind(q mcp.InputRequest) string {
	switch q.(type) {
	case *mcp.ElicitParams:
		return "elicitation"
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "sampling"
	case *mcp.ListRootsParams:
		return "roots"
	}
	return "input"
}

// fulfil asks the client of o every input request of a server's
// input_required result at once, and returns the answers; each question
// waits for its answer no longer than ParkTimeout.
func (g *Gateway) fulfil(ctx context.Context, o *origin, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ctx, cancel := g.askBound(ctx, "input")
	defer cancel()
	type got struct {
		id   string
		resp mcp.InputResponse
		err  error
	}
	ch := make(chan got, len(reqs))
	for id, q := range reqs {
		go func() {
			resp, err := o.ask(ctx, inputKind(q), q)
			ch <- got{id, resp, err}
		}()
	}
	out := make(mcp.InputResponseMap, len(reqs))
	var errs []error
	for range reqs {
		a := <-ch
		if a.err != nil {
			errs = append(errs, fmt.Errorf("input request %q: %w", a.id, a.err))
			continue
		}
		out[a.id] = a.resp
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// samplingResult turns a client's answer to a sampling question into the
// result a handshake-era server expects.
func samplingResult(resp mcp.InputResponse) (*mcp.CreateMessageResult, error) {
	switch r := resp.(type) {
	case *mcp.CreateMessageResult:
		return r, nil
	case *mcp.CreateMessageWithToolsResult:
		out := &mcp.CreateMessageResult{Meta: r.Meta, Model: r.Model, Role: r.Role, StopReason: r.StopReason}
		if len(r.Content) > 0 {
			out.Content = r.Content[0]
		}
		return out, nil
	}
	return nil, fmt.Errorf("the client answered a sampling request with %T", resp)
}
