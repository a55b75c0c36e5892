package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/argplan"
	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/park"
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
//
// A PendingCall answers one question: ID names it, and a client takes one
// answer for it (a second resume is an *AnsweredError). It is bound to the
// principal it was made for (Principal), to its tool (Server, Tool) and
// to the protocol version that asked (Protocol): a resume that does not
// match is a *ResumeDeniedError. Nothing in it is secret to the adapter:
// a tool's hidden arguments (ArgTransform.Hide) are not stored; Resume
// fills them in again.
type PendingCall struct {
	// ID names this question; every interrupt has a new one.
	ID string `json:",omitempty"`
	// Server and Tool name the server and its own name for the tool;
	// ModelTool is the name the model used.
	Server, Tool, ModelTool string
	// Arguments are the call's arguments as the model sent them: Tool.Resume
	// applies the tool's argument transforms to them again.
	Arguments json.RawMessage
	// Requests are the questions awaiting answers, in the order to ask them.
	Requests []elicitation.Request
	// RequestState is the server's opaque state to echo when retrying a
	// 2026-07-28 (multi-round-trip) call.
	RequestState string
	// ParkID identifies a handshake-era call parked in this process.
	ParkID string
	// Queued is set on a handshake-era call that has not started because
	// another call of its run on its connection was parked, waiting for the
	// user's answer; it asks nothing (Requests is empty). Resuming it, with
	// no answers, waits until that answer is in (or the other call is
	// passed over or ends), then makes the call. The value is opaque.
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

	// Principal is the CallIdentity.Principal the call was made for.
	Principal string `json:",omitempty"`
	// Protocol is the protocol version of the connection that asked.
	Protocol string `json:",omitempty"`
	// Run is the run the call belongs to (WithRun).
	Run string `json:",omitempty"`
	// Shaped is set when the tool transforms its arguments: resume it with
	// Tool.Resume, which applies them, not Client.Resume.
	Shaped bool `json:",omitempty"`
	// Settings are the call's own CallOptions that the next rounds keep.
	Settings *CallSettings `json:",omitempty"`
}

// CallSettings are the CallOptions of a call that are plain data, kept in
// its PendingCall so that every round of the call is made with them.
type CallSettings struct {
	Meta                   map[string]any `json:",omitempty"`
	Timeout                time.Duration  `json:",omitempty"`
	ResetTimeoutOnProgress bool           `json:",omitempty"`
	MaxTotalTimeout        time.Duration  `json:",omitempty"`
	Task                   TaskMode       `json:",omitempty"`
}

// settings returns the plain-data settings of o, or nil.
func (o *CallOptions) settings() *CallSettings {
	if o == nil {
		return nil
	}
	s := &CallSettings{Meta: o.Meta, Timeout: o.Timeout, ResetTimeoutOnProgress: o.ResetTimeoutOnProgress,
		MaxTotalTimeout: o.MaxTotalTimeout, Task: o.Task}
	if s.Meta == nil && s.Timeout == 0 && !s.ResetTimeoutOnProgress && s.MaxTotalTimeout == 0 && s.Task == TaskDefault {
		return nil
	}
	return s
}

// options returns the CallOptions the settings stand for.
func (s *CallSettings) options() *CallOptions {
	if s == nil {
		return &CallOptions{}
	}
	return &CallOptions{Meta: s.Meta, Timeout: s.Timeout, ResetTimeoutOnProgress: s.ResetTimeoutOnProgress,
		MaxTotalTimeout: s.MaxTotalTimeout, Task: s.Task}
}

// Asks reports whether p has questions for the user: false for nil, and
// for a call queued behind another call's question (PendingCall.Queued),
// which is resumed without answers.
func (p *PendingCall) Asks() bool { return p != nil && len(p.Requests) > 0 }

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
// ElicitInterrupt mode: its parked calls and the record of its questions.
type interruptState = park.Table[*Result]

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
	clone.pin(c.pinned())
	clone.shape = c.shape
	if c.oauthFlow != nil {
		clone.oauthFlow = c.oauthFlow // the same user's tokens for the same server
	}
	clone.interrupt = park.New(parkTimeout, clone.log, outcomeText)
	clone.callTool = clone.callInterruptible
	return clone
}

// callInterruptible makes a tool call that may stop for the user's
// answers: a round of the multi-round-trip protocol on a 2026-07-28
// connection, a call that may be parked on a handshake-era one.
func (c *Client) callInterruptible(ctx context.Context, tc *toolCall) (*Result, error) {
	return c.callInterruptibleAfter(ctx, tc, "", 0)
}

// callInterruptibleAfter is callInterruptible for a queued call resumed
// with its token (see callParked), or a call whose earlier rounds asked
// round questions (a -32042 retry).
func (c *Client) callInterruptibleAfter(ctx context.Context, tc *toolCall, after string, round int) (*Result, error) {
	for attempt := 0; ; attempt++ {
		s, err := c.session(ctx)
		if err != nil {
			return nil, err
		}
		// The client's multi-round-trip loop is off and go-sdk's elicitation handler
		// parks the call: both need go-sdk's path.
		tc.viaSDK = true
		tc.protocol = s.ProtocolVersion()
		pc := c.pendingFor(tc, round)
		if s.Discover() {
			tc.lane = nil
			return c.callRound(ctx, pc, nil, tc)
		}
		res, err := c.callParked(ctx, s, pc, tc, after)
		if attempt == 0 && errors.Is(err, errLaneMoved) {
			// The connection was replaced before the call was sent:
			// make it on the new one, in a lane of its own.
			continue
		}
		return res, err
	}
}

// pendingFor starts the PendingCall of the next question of tc, whose
// earlier rounds asked round questions.
func (c *Client) pendingFor(tc *toolCall, round int) *PendingCall {
	return &PendingCall{ID: newParkID(), Server: c.name, Tool: tc.tool, ModelTool: tc.modelName, Arguments: tc.modelArgs,
		Round: round, Principal: tc.principal, Protocol: tc.protocol, Run: tc.run, Shaped: tc.shaped, Settings: tc.settings}
}

// next returns the PendingCall of the question after pc's.
func (pc *PendingCall) next() *PendingCall {
	n := &PendingCall{ID: newParkID(), Server: pc.Server, Tool: pc.Tool, ModelTool: pc.ModelTool, Arguments: pc.Arguments,
		Round: pc.Round + 1, Principal: pc.Principal, Protocol: pc.Protocol, Run: pc.Run, Shaped: pc.Shaped, Settings: pc.Settings}
	return n
}

// Resume continues a call that returned an *InputRequiredError, with the
// user's answers. It may return another *InputRequiredError when the server
// has more questions. An answer that does not fit its question (a form
// value of the wrong type, a missing required field, an unknown key) is an
// *elicitation.Error and nothing is sent: ask again and resume again.
//
// Each question is answered once: a resume of a question already answered
// or closed (a double submit, a retry, an old checkpoint, a resume that
// lost to another one running at the same time) is an *AnsweredError, and
// nothing is sent. A resume for another principal (CallIdentity), for
// another tool, or on a connection that now speaks another protocol
// version is a *ResumeDeniedError. The call's arguments go through the
// tool's argument transforms and argument check again (arguments that
// break the server's input schema are an error Result, and nothing is
// sent), and its CallOptions (kept in
// PendingCall.Settings) and the tool's timeout and task mode apply to
// every round.
//
// A cancel is the user's answer like any other: the server gets it, and
// what the server then answers is the result.
//
// A nil resume answers nothing. A call with questions then keeps waiting:
// Resume returns its *InputRequiredError again, and the calls queued
// behind it (PendingCall.Queued) stop waiting for its answer. A queued
// call, which asks nothing, is resumed with nil (or no responses): it
// waits for the answer of the call it queued behind, then runs, so resume
// it together with that call (ResumeTurn in package toolcall does).
func (t *Tool) Resume(ctx context.Context, pending *PendingCall, resume *elicitation.Resume) (*Result, error) {
	if t.local != nil {
		return t.local.resume(ctx, pending, resume)
	}
	if pending == nil {
		return nil, errors.New("mcpadapter: Resume with no pending call")
	}
	if pending.Server != t.Server || pending.Tool != t.OriginalName {
		return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedTool,
			Detail: fmt.Sprintf("the call was made with tool %q of server %q; resume it with that tool, not with %q of %q", pending.Tool, pending.Server, t.OriginalName, t.Server)}
	}
	o := pending.Settings.options()
	o.toolTimeout = t.timeout
	if o.Task == TaskDefault {
		o.Task = t.task
	}
	res, err := t.client.resume(ctx, pending, resume, t.args, t.checkCall, o)
	return t.limited(t.softened(ctx, res, err))
}

// Resume continues a pending call made with Client.CallTool; see
// Tool.Resume. A call made through a Tool that transforms its arguments
// (PendingCall.Shaped) must be resumed with that Tool.
func (c *Client) Resume(ctx context.Context, pending *PendingCall, resume *elicitation.Resume) (*Result, error) {
	if pending != nil && pending.Shaped {
		return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedTool,
			Detail: "the tool transforms its arguments: resume the call with Tool.Resume"}
	}
	if pending != nil {
		if name := c.nameAt(ctx); pending.Server != name {
			return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedTool,
				Detail: fmt.Sprintf("the call was made on server %q, this client reaches %q", pending.Server, name)}
		}
	}
	var o *CallOptions
	if pending != nil {
		o = pending.Settings.options()
	}
	return c.resume(ctx, pending, resume, nil, nil, o)
}

// resume continues pending; plan is the tool's argument plan, check its
// check of the server's arguments against the tool's schema (as in call),
// and opts the call's options.
func (c *Client) resume(ctx context.Context, pending *PendingCall, resume *elicitation.Resume, plan *argplan.Plan, check func(json.RawMessage) string, opts *CallOptions) (*Result, error) {
	if c.interrupt == nil {
		return nil, errors.New("mcpadapter: Resume on a client without WithElicitation(ElicitInterrupt)")
	}
	if pending == nil {
		return nil, errors.New("mcpadapter: Resume with no pending call")
	}
	if p := principalOf(ctx); p != pending.Principal {
		return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedPrincipal,
			Detail: fmt.Sprintf("the call was made for principal %q, the resume's context is for %q", pending.Principal, p)}
	}
	if err := CallIdentityFrom(ctx).check(); err != nil {
		return nil, err
	}
	if resume == nil {
		if len(pending.Requests) > 0 {
			return c.passOver(pending)
		}
		resume = &elicitation.Resume{}
	}
	answers, err := elicitation.Check(pending.Requests, resume)
	if err != nil {
		// Nothing is sent; a question no longer open says so first.
		var ir *InputRequiredError
		if res, perr := c.passOver(pending); !errors.As(perr, &ir) {
			return res, perr
		}
		return nil, err
	}
	args := plan.Wire(pending.Arguments)
	if len(args) == 0 || checkArguments(args) != nil {
		return errorResult(fmt.Sprintf("Invalid arguments for tool %q in the pending call: send a JSON object that matches the tool's input schema.", pending.Tool)), nil
	}
	if check != nil {
		if msg := check(args); msg != "" {
			return errorResult(msg), nil
		}
	}
	tc := &toolCall{tool: pending.Tool, modelName: pending.ModelTool, args: args, modelArgs: pending.Arguments,
		shaped: pending.Shaped, settings: pending.Settings, principal: pending.Principal, run: pending.Run, protocol: pending.Protocol}
	tc.meta = callMeta(ctx, opts.Meta)
	tc.timeouts = opts.timeouts()
	tc.task = opts.Task
	if pending.ParkID != "" {
		return c.resumeParked(ctx, pending, answers, tc) // park.go
	}
	if err := c.take(pending, answers); err != nil {
		return nil, err
	}
	res, err := c.resumeUnparked(ctx, pending, answers, tc)
	c.settle(pending, res, err)
	return res, err
}

// resumeUnparked continues a call that is not parked in this process,
// once its question has been taken.
func (c *Client) resumeUnparked(ctx context.Context, pending *PendingCall, answers map[string]elicitation.Response, tc *toolCall) (*Result, error) {
	switch {
	case pending.Queued != "" && len(pending.Requests) == 0:
		return c.callInterruptibleAfter(ctx, tc, pending.Queued, pending.Round)
	case pending.Retry:
		if !inputwire.All(answers, elicitation.Accept) {
			what := "declined"
			if inputwire.Any(answers, elicitation.Cancel) {
				what = "cancelled"
			}
			return errorResult(fmt.Sprintf("The user %s what tool %q needs, so it did not run.", what, pending.ModelTool)), nil
		}
		res, err := c.callInterruptibleAfter(ctx, tc, "", pending.Round)
		if err != nil {
			// Accepted before the sign-in ended: asked again, as the
			// first call was (websignin.go).
			err = c.signInQuestion(tc, err)
		}
		return res, err
	}
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	if (pending.Protocol != "" && s.ProtocolVersion() != pending.Protocol) || (!s.Discover() && pending.Task == nil) {
		return nil, &ResumeDeniedError{Server: pending.Server, Tool: pending.Tool, Reason: DeniedProtocol,
			Detail: fmt.Sprintf("the question was asked on protocol %s; the server now speaks %s, where it cannot be answered: call the tool again", orUnknown(pending.Protocol), s.ProtocolVersion())}
	}
	if pending.Task != nil {
		return c.resumeTaskInput(ctx, pending, answers, tc) // task_input.go
	}
	return c.callRound(ctx, pending, inputwire.Responses(answers), tc)
}

func orUnknown(v string) string {
	if v == "" {
		return "(not recorded)"
	}
	return v
}

// take claims pending's question for answers: a question already answered
// or closed is an *AnsweredError.
func (c *Client) take(pending *PendingCall, answers map[string]elicitation.Response) error {
	if rec, ok := c.interrupt.Take(pending.Principal, pending.ID, pending.Server, pending.Tool, pending.Round, string(inputwire.Summary(answers))); !ok {
		return answeredError(pending.ID, rec)
	}
	return nil
}

// settle records what the call did after pending's answer.
func (c *Client) settle(pending *PendingCall, res *Result, err error) {
	c.interrupt.Settle(pending.Principal, pending.ID, res, err)
}

// A run is what one user asked of an agent: the model's tool calls of one
// turn, and the resumes that continue them. Calls of one run on a
// handshake-era connection wait for each other's questions; a call of
// another run means its user moved on: a question of theirs still waiting
// on that connection is closed (see Options.Elicitation, ElicitInterrupt).
//
// The model SDK bindings (package toolcall) make each turn a run of its
// own unless the context already names one; the eino binding makes each
// agent run one. A call made with no run is a run of its own.

type runKey struct{}

// WithRun returns a context whose tool calls belong to the run id (any
// string unique to the run: a conversation turn's id, a checkpoint id).
// "" removes the run of ctx.
func WithRun(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runKey{}, id)
}

// RunFrom returns the run set by WithRun, or "".
func RunFrom(ctx context.Context) string {
	id, _ := ctx.Value(runKey{}).(string)
	return id
}

// NewRunID returns a new random run id.
func NewRunID() string { return newParkID() }
