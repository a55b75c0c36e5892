// Package toolcall holds what the model SDK bindings (the anthropic,
// gemini, openai and langchaingo modules) share when they run the tool
// calls of one model turn: the calls run in parallel with a bound, each
// call's (Result, error) becomes an [Outcome] — a result the model reads
// (IsError for a tool error), a pending question (a
// [mcpadapter.PendingCall] from [mcpadapter.ElicitInterrupt]) or a
// transport failure —, and [ContentText] renders a content block as the
// text a model reads.
//
// A binding keeps its own Call and Outcome types; its Outcome has the
// fields of Outcome[Call] in the same order, so Go converts one into the
// other.
package toolcall

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
)

// An Outcome is what one call came to: exactly one of Result, Pending and
// Err is set (Result may be nil when the call function returned nil, nil).
type Outcome[C any] struct {
	// Call is the model's call, as the binding represents it.
	Call C
	// Result is the tool's result (IsError for a tool error the model
	// reads); nil when Pending or Err is set.
	Result *mcpadapter.Result
	// Pending is set when the server asked the user something
	// (elicitation with mcpadapter.ElicitInterrupt): ask, then resume.
	Pending *mcpadapter.PendingCall
	// Err is a transport failure: the model cannot act on it.
	Err error
}

// Text renders the outcome as the text a model reads: the text of the
// result's blocks (each by [ContentText], one a line), the server's error
// text for a tool error, and a sentence for a call that did not finish.
// Whether it is an error is [Outcome.IsError]'s to say.
func (o Outcome[C]) Text() string {
	switch {
	case o.Err != nil:
		return "the tool could not be reached: " + o.Err.Error()
	case o.Pending != nil:
		return "the tool is waiting for the user's answer"
	case o.Result == nil:
		return ""
	}
	parts := make([]string, 0, len(o.Result.Content))
	for _, c := range o.Result.Content {
		parts = append(parts, ContentText(c))
	}
	return strings.Join(parts, "\n")
}

// IsError reports whether the model should read the outcome as an error:
// a tool error, or a call that did not finish (transport failure, pending
// question).
func (o Outcome[C]) IsError() bool {
	return o.Err != nil || o.Pending != nil || (o.Result != nil && o.Result.IsError)
}

// Settle builds the Outcome of call c from what Tool.Call or Tool.Resume
// returned: an *mcpadapter.InputRequiredError becomes Pending, any other
// error Err, and otherwise res is the Result.
func Settle[C any](c C, res *mcpadapter.Result, err error) Outcome[C] {
	var ire *mcpadapter.InputRequiredError
	switch {
	case errors.As(err, &ire):
		return Outcome[C]{Call: c, Pending: ire.Pending}
	case err != nil:
		return Outcome[C]{Call: c, Err: err}
	}
	return Outcome[C]{Call: c, Result: res}
}

// RunTurn runs call for each of calls, at most limit at once (limit < 1
// means 1), and returns one Outcome per call in the same order, each
// built by [Settle]. A call that has not started when ctx is done is not
// run: its Outcome's Err is ctx.Err(). RunTurn returns when every call it
// started has returned.
//
// The calls are one run (mcpadapter.WithRun): unless ctx names a run
// already, RunTurn makes a new one. So on a handshake-era server the
// calls of the turn wait for each other's questions, and a question of an
// earlier turn that nobody answered is closed (see ResumeTurn).
func RunTurn[C any](ctx context.Context, calls []C, limit int,
	call func(context.Context, C) (*mcpadapter.Result, error)) []Outcome[C] {
	if limit < 1 {
		limit = 1
	}
	if mcpadapter.RunFrom(ctx) == "" {
		ctx = mcpadapter.WithRun(ctx, mcpadapter.NewRunID())
	}
	outs := make([]Outcome[C], len(calls))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				outs[i] = Outcome[C]{Call: c, Err: ctx.Err()}
				return
			}
			defer func() { <-sem }()
			res, err := call(ctx, c)
			outs[i] = Settle(c, res, err)
		}()
	}
	wg.Wait()
	return outs
}

// Waiting reports whether a call of outs waits for the user: then some
// outcome asks questions (Pending.Asks); resume the turn with ResumeTurn.
func Waiting[C any](outs []Outcome[C]) bool {
	for _, o := range outs {
		if o.Pending != nil {
			return true
		}
	}
	return false
}

// ResumeTurn resumes every pending outcome of a turn at once, each with
// the answers to its questions, answers[o.Pending.ID] (nil when the user
// did not answer it this time: it stays pending), and returns the turn's
// outcomes in the same order: the ones that were done unchanged, the
// others settled anew (a call may ask again). An answer that does not fit
// its question (an *elicitation.Error) leaves the call pending on the same
// question, with Pending.Problem saying what was wrong. A call queued behind
// another call's question (Pending.Asks is false) is resumed with no
// answers: it runs once that question is answered, so resuming the whole
// turn at once never waits for an answer nobody has given. Every call
// still pending afterwards waits on a question the user can see: when
// Waiting, at least one outcome Asks.
func ResumeTurn[C any](ctx context.Context, outs []Outcome[C], answers map[string]*elicitation.Resume,
	resume func(context.Context, C, *mcpadapter.PendingCall, *elicitation.Resume) (*mcpadapter.Result, error)) []Outcome[C] {
	next := make([]Outcome[C], len(outs))
	copy(next, outs)
	var wg sync.WaitGroup
	for i, o := range outs {
		if o.Pending == nil {
			continue
		}
		var a *elicitation.Resume
		if o.Pending.Asks() {
			a = answers[o.Pending.ID]
		}
		wg.Go(func() {
			res, err := resume(ctx, o.Call, o.Pending, a)
			var bad *elicitation.Error
			if errors.As(err, &bad) {
				// Nothing was sent: the same question, with what was wrong.
				again := *o.Pending
				again.Problem = bad.Error()
				next[i] = Outcome[C]{Call: o.Call, Pending: &again}
				return
			}
			next[i] = Settle(o.Call, res, err)
		})
	}
	wg.Wait()
	return next
}

// Outcomes converts outs to a binding's own outcome type O, a struct type
// with the fields of Outcome[C] in the same order.
func Outcomes[O outcome[C], C any](outs []Outcome[C]) []O {
	conv := make([]O, len(outs))
	for i, o := range outs {
		conv[i] = O(o)
	}
	return conv
}

// Resume answers the pending question of call c on tool and settles the
// call's new outcome (which may be pending again: another question). For a
// transport failure the error is wrap(c, Err). To resume the calls of a
// turn, use ResumeTurn: a call queued behind another's question
// (Pending.Asks is false) resumed alone waits for that question's answer.
func Resume[C any](ctx context.Context, tool *mcpadapter.Tool, c C, pending *mcpadapter.PendingCall,
	answers *elicitation.Resume, wrap func(C, error) error) (Outcome[C], error) {
	res, err := tool.Resume(ctx, pending, answers)
	out := Settle(c, res, err)
	if out.Err != nil {
		return out, wrap(c, out.Err)
	}
	return out, nil
}

// Failures joins, with errors.Join, wrap(call, err) for each outcome whose
// Err is set (the transport failures); nil when there is none.
func Failures[C any](outs []Outcome[C], wrap func(C, error) error) error {
	var errs []error
	for _, o := range outs {
		if o.Err != nil {
			errs = append(errs, wrap(o.Call, o.Err))
		}
	}
	return errors.Join(errs...)
}

// ContentText renders one content block as the text a model reads: the
// text of text blocks and of embedded text resources, a bracketed
// description of images, audio, resource links and binary resources
// ("[image image/png, 67 bytes]"), "" for a kind it does not know.
func ContentText(c mcpadapter.Content) string {
	switch c := c.(type) {
	case *mcpadapter.TextContent:
		return c.Text
	case *mcpadapter.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcpadapter.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcpadapter.ResourceLinkContent:
		return fmt.Sprintf("[resource %s %s]", c.Name, c.URI)
	case *mcpadapter.EmbeddedResourceContent:
		if c.Text != "" {
			return c.Text
		}
		return fmt.Sprintf("[resource %s, %d bytes]", c.URI, len(c.Blob))
	}
	return ""
}

// ErrorResult returns a tool-error result with one text block: what a
// binding gives the model for a call it cannot send (an unknown tool,
// arguments that are not JSON).
func ErrorResult(text string) *mcpadapter.Result {
	return &mcpadapter.Result{IsError: true, Content: []mcpadapter.Content{&mcpadapter.TextContent{Text: text}}}
}

// An outcome is a binding's own outcome type: a struct type with the
// fields of Outcome[C] in the same order.
type outcome[C any] interface {
	~struct {
		Call    C
		Result  *mcpadapter.Result
		Pending *mcpadapter.PendingCall
		Err     error
	}
}

// WaitingOutcomes is Waiting for a binding's own outcome type.
func WaitingOutcomes[O outcome[C], C any](outs []O) bool {
	for _, o := range outs {
		if Outcome[C](o).Pending != nil {
			return true
		}
	}
	return false
}

// ResumeOutcomes is ResumeTurn for a binding's own outcome type; the
// error joins wrap(call, err) for each transport failure of the turn.
func ResumeOutcomes[O outcome[C], C any](ctx context.Context, outs []O, answers map[string]*elicitation.Resume,
	resume func(context.Context, C, *mcpadapter.PendingCall, *elicitation.Resume) (*mcpadapter.Result, error),
	wrap func(C, error) error) ([]O, error) {
	conv := make([]Outcome[C], len(outs))
	for i, o := range outs {
		conv[i] = Outcome[C](o)
	}
	next := ResumeTurn(ctx, conv, answers, resume)
	return Outcomes[O](next), Failures(next, wrap)
}
