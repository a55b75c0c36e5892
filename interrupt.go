package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ElicitationMode says what a tool does when its server asks the user a
// question in the middle of a call.
type ElicitationMode int

const (
	// ElicitNone advertises no elicitation capability: a server that needs
	// an answer declines the call or goes on without it. The default.
	ElicitNone ElicitationMode = iota
	// ElicitInterrupt turns the question into an interrupt: Tool.Call
	// returns an *InputRequiredError carrying the questions, and
	// Tool.Resume continues the call with the answers. The eino binding
	// turns these into agent interrupts and resumes.
	ElicitInterrupt
)

// DefaultParkTimeout is how long a handshake-era call waits, parked in this
// process, for the answer to its server's question.
const DefaultParkTimeout = 10 * time.Minute

// PendingCall is a tool call waiting for the user's answers. It holds only
// plain data, so it can be saved in a checkpoint (encoding/json or gob)
// and resumed by another process when the server speaks 2026-07-28; a
// handshake-era call is parked in the process that made it.
type PendingCall struct {
	// Server and Tool name the server and its own name for the tool;
	// ModelTool is the name the model used.
	Server, Tool, ModelTool string
	// Arguments are the call's arguments.
	Arguments json.RawMessage
	// Requests are the questions awaiting answers, in the order to ask them.
	Requests []elicitation.Request
	// RequestState is the server's opaque state to echo when retrying a
	// 2026-07-28 (multi-round-trip) call.
	RequestState string
	// ParkID identifies a handshake-era call parked in this process.
	ParkID string
	// Queued is set on a handshake-era call that has not started because
	// another call on its connection was parked, waiting for the user's
	// answer; it asks nothing (Requests is empty). Resuming it, with no
	// answers, waits until that answer is in (or the other call is passed
	// over or ends), then makes the call. The value is opaque.
	Queued string
	// Retry is set when the server refused the call until the user visits
	// the URLs (-32042): the call is made again after they accept.
	Retry bool
	// Round counts the questions asked so far in this call.
	Round int
	// Problem says why the previous answer was not taken, if it was not.
	Problem string
	// Task is set when the questions come from a task (2026-07-28 Tasks
	// extension): Resume answers them with tasks/update, in any process.
	Task *TaskHandle `json:",omitempty"`
}

// Interrupt returns the payload for an agent interrupt.
func (p *PendingCall) Interrupt() *elicitation.Interrupt {
	return &elicitation.Interrupt{Type: elicitation.InterruptType, ToolName: p.ModelTool, Server: p.Server, Requests: p.Requests, Problem: p.Problem}
}

// InputRequiredError is returned by Tool.Call and Tool.Resume in
// ElicitInterrupt mode when the server needs the user's answers before the
// call can finish. Resume the call with Tool.Resume.
type InputRequiredError struct {
	Pending *PendingCall
}

func (e *InputRequiredError) Error() string {
	if len(e.Pending.Requests) == 0 && e.Pending.Queued != "" {
		return fmt.Sprintf("mcpadapter: server %q, tool %q: queued behind another call's question; resume it to run it", e.Pending.Server, e.Pending.Tool)
	}
	return fmt.Sprintf("mcpadapter: server %q, tool %q: waiting for the user to answer %d question(s)", e.Pending.Server, e.Pending.Tool, len(e.Pending.Requests))
}

// interruptState is the elicitation machinery of a client in
// ElicitInterrupt mode.
type interruptState struct {
	parkTimeout time.Duration
	lane        lane
	parks       parkRegistry
}

// cloneForInterrupt returns a copy of c whose elicitations become
// interrupts. The copy shares nothing mutable with c. Its cache settings
// are c's, but not its cached entries: newClientWith makes it a store of
// its own, unless CacheConfig.Store names one, which is shared by design.
func (c *Client) cloneForInterrupt(parkTimeout time.Duration) *Client {
	if parkTimeout <= 0 {
		parkTimeout = DefaultParkTimeout
	}
	opts := c.opts
	var clone *Client
	opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return clone.onElicit(ctx, req)
	}
	clone = newClientWith(c.ep, opts, func(o *mcp.ClientOptions) {
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
		o.Capabilities.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	})
	clone.pinVersion = c.pinned()
	clone.shape = c.shape
	if c.oauthFlow != nil {
		clone.oauthFlow = c.oauthFlow // the same user's tokens for the same server
	}
	clone.interrupt = &interruptState{parkTimeout: parkTimeout}
	clone.interrupt.lane.init()
	clone.interrupt.parks.init()
	clone.callTool = clone.callInterruptible
	return clone
}

// callInterruptible makes a tool call that may stop for the user's
// answers: a round of the multi-round-trip protocol on a 2026-07-28
// connection, a call that may be parked on a handshake-era one.
func (c *Client) callInterruptible(ctx context.Context, tc *toolCall) (*Result, error) {
	return c.callInterruptibleAfter(ctx, tc, "")
}

// callInterruptibleAfter is callInterruptible for a queued call resumed
// with its token (see callParked).
func (c *Client) callInterruptibleAfter(ctx context.Context, tc *toolCall, after string) (*Result, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	pc := &PendingCall{Server: c.name, Tool: tc.tool, ModelTool: tc.modelName, Arguments: tc.args}
	if s.info.Era == EraDiscover {
		return c.callRound(ctx, pc, nil, tc)
	}
	return c.callParked(ctx, pc, tc, after)
}

// callRound makes one multi-round-trip (2026-07-28) attempt of pc with the
// given answers.
func (c *Client) callRound(ctx context.Context, pc *PendingCall, answers mcp.InputResponseMap, tc *toolCall) (*Result, error) {
	params := &mcp.CallToolParams{Name: pc.Tool, Arguments: pc.Arguments, InputResponses: answers, RequestState: pc.RequestState}
	for shed := 0; ; shed++ {
		res, err := c.sendTaskable(ctx, tc, params, c.opts.Timeout)
		if err != nil {
			return c.callFailed(pc, err)
		}
		if r, err, ok := c.taskReply(ctx, tc, res); ok { // a task the server made
			return r, err
		}
		if !res.NeedsInput() {
			return convertResult(c.name, pc.Tool, res)
		}
		if len(res.InputRequests) == 0 {
			// Load shedding: the server asks us to try again.
			if shed >= 3 {
				return nil, c.transportError(nil, "tools/call", pc.Tool, errors.New("the server kept asking to retry (load shedding)"))
			}
			time.Sleep(time.Duration(100*(shed+1)) * time.Millisecond)
			continue
		}
		next := &PendingCall{Server: pc.Server, Tool: pc.Tool, ModelTool: pc.ModelTool, Arguments: pc.Arguments,
			RequestState: res.RequestState, Round: pc.Round + 1}
		auto := make(mcp.InputResponseMap)
		keys := make([]string, 0, len(res.InputRequests))
		for k := range res.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch r := res.InputRequests[k].(type) {
			case *mcp.ElicitParams:
				next.Requests = append(next.Requests, requestFrom(k, r))
			default:
				// Sampling and roots stay with the client's own handlers.
				resp, err := c.fulfill(ctx, r)
				if err != nil {
					return errorResult(fmt.Sprintf("Tool %q needs input this client cannot give: %v", pc.Tool, err)), nil
				}
				auto[k] = resp
			}
		}
		if len(next.Requests) == 0 {
			params = &mcp.CallToolParams{Name: pc.Tool, Arguments: pc.Arguments, InputResponses: auto, RequestState: res.RequestState}
			continue
		}
		if len(auto) > 0 {
			return errorResult(fmt.Sprintf("Tool %q asked for the user's answers and for sampling or roots in the same round, which this client does not support", pc.Tool)), nil
		}
		return nil, &InputRequiredError{Pending: next}
	}
}

// callFailed turns a failed call into its result: a server refusal becomes
// an error result, except -32042 (URL elicitation required), which becomes
// questions.
func (c *Client) callFailed(pc *PendingCall, err error) (*Result, error) {
	var we *jsonrpc.Error
	if !isServerError(err) || !errors.As(err, &we) {
		return nil, err
	}
	if we.Code == mcp.CodeURLElicitationRequired {
		var data struct {
			Elicitations []*mcp.ElicitParams `json:"elicitations"`
		}
		if json.Unmarshal(we.Data, &data) == nil && len(data.Elicitations) > 0 {
			next := &PendingCall{Server: pc.Server, Tool: pc.Tool, ModelTool: pc.ModelTool, Arguments: pc.Arguments, Retry: true, Round: pc.Round + 1}
			for i, e := range data.Elicitations {
				key := e.ElicitationID
				if key == "" {
					key = fmt.Sprintf("url-%d", i+1)
				}
				next.Requests = append(next.Requests, requestFrom(key, e))
			}
			return nil, &InputRequiredError{Pending: next}
		}
	}
	return refusal(pc.Tool, err)
}

// fulfill answers a non-elicitation input request with the client's own
// handlers.
func (c *Client) fulfill(ctx context.Context, r mcp.InputRequest) (mcp.InputResponse, error) {
	switch r := r.(type) {
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.CreateMessageParams:
		if c.opts.SamplingHandler == nil {
			return nil, errors.New("the server asked for sampling and no SamplingHandler is set")
		}
		return c.opts.SamplingHandler(ctx, &mcp.CreateMessageRequest{Params: r})
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	case *mcp.ListRootsParams:
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
		return &mcp.ListRootsResult{Roots: c.opts.Roots}, nil
	default:
		return nil, fmt.Errorf("unsupported input request %T", r)
	}
}

// requestFrom describes a server's elicitation as a Request.
func requestFrom(key string, p *mcp.ElicitParams) elicitation.Request {
	r := elicitation.Request{Key: key, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID, Mode: elicitation.ModeForm}
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		r.Mode = elicitation.ModeURL
	}
	if p.RequestedSchema != nil {
		if b, err := json.Marshal(p.RequestedSchema); err == nil {
			r.RequestedSchema = b
		}
	}
	return r
}

// Resume continues a call that returned an *InputRequiredError, with the
// user's answers. It may return another *InputRequiredError when the server
// has more questions. An answer that does not fit its question (a form
// value of the wrong type, a missing required field, an unknown key) is an
// *elicitation.Error and nothing is sent: ask again and resume again.
//
// A nil resume answers nothing. A call with questions then keeps waiting:
// Resume returns its *InputRequiredError again, and the calls queued
// behind it (PendingCall.Queued) stop waiting for its answer. A queued
// call, which asks nothing, is resumed with nil (or no responses): it
// waits for the answer of the call it queued behind, then runs, so resume
// it together with that call or after it.
func (t *Tool) Resume(ctx context.Context, pending *PendingCall, resume *elicitation.Resume) (*Result, error) {
	if t.local != nil {
		return t.local.resume(ctx, pending, resume)
	}
	res, err := t.client.Resume(ctx, pending, resume)
	return t.limited(t.softened(ctx, res, err))
}

// Resume continues a pending call; see Tool.Resume.
func (c *Client) Resume(ctx context.Context, pending *PendingCall, resume *elicitation.Resume) (*Result, error) {
	if c.interrupt == nil {
		return nil, errors.New("mcpadapter: Resume on a client without WithElicitation(ElicitInterrupt)")
	}
	if pending == nil {
		return nil, errors.New("mcpadapter: Resume with no pending call")
	}
	if resume == nil {
		if len(pending.Requests) > 0 {
			c.passOver(pending)
			return nil, &InputRequiredError{Pending: pending}
		}
		resume = &elicitation.Resume{}
	}
	answers, err := elicitation.Check(pending.Requests, resume)
	if err != nil {
		c.passOver(pending)
		return nil, err
	}
	tc := &toolCall{tool: pending.Tool, modelName: pending.ModelTool, args: pending.Arguments, meta: callMeta(ctx, nil)}
	switch {
	case pending.Queued != "" && len(pending.Requests) == 0:
		return c.callInterruptibleAfter(ctx, tc, pending.Queued)
	case pending.ParkID != "":
		return c.resumeParked(ctx, pending, answers)
	case pending.Task != nil:
		return c.resumeTaskInput(ctx, pending, answers, tc) // task_input.go
	case anyAction(answers, elicitation.Cancel):
		return errorResult(fmt.Sprintf("The user cancelled the call to tool %q.", pending.ModelTool)), nil
	case pending.Retry:
		if !allAction(answers, elicitation.Accept) {
			return errorResult(fmt.Sprintf("The user declined what tool %q needs, so it did not run.", pending.ModelTool)), nil
		}
		return c.callInterruptible(ctx, tc)
	default:
		responses := make(mcp.InputResponseMap, len(answers))
		for k, a := range answers {
			responses[k] = &mcp.ElicitResult{Action: string(a.Action), Content: a.Content}
		}
		return c.callRound(ctx, pending, responses, tc)
	}
}

// passOver lets the calls queued behind a parked pending call stop
// waiting for its answer: it was resumed without one.
func (c *Client) passOver(pending *PendingCall) {
	if pending.ParkID != "" {
		c.interrupt.lane.passOver(pending.ParkID)
	}
}

func anyAction(answers map[string]elicitation.Response, a elicitation.Action) bool {
	for _, r := range answers {
		if r.Action == a {
			return true
		}
	}
	return false
}

func allAction(answers map[string]elicitation.Response, a elicitation.Action) bool {
	for _, r := range answers {
		if r.Action != a {
			return false
		}
	}
	return true
}
