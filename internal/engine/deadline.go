package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// TimeoutKind says which limit ended a tool call.
type TimeoutKind int

const (
	// TimeoutRequest: no answer within the call's timeout.
	TimeoutRequest TimeoutKind = iota + 1
	// TimeoutNoProgress: with ResetTimeoutOnProgress, the server reported
	// no progress (and sent no answer) for the call's timeout.
	TimeoutNoProgress
	// TimeoutTotal: the call ran longer than its MaxTotalTimeout, however
	// often the server reported progress.
	TimeoutTotal
)

// String returns "request", "no-progress" or "total".
func (k TimeoutKind) String() string {
	switch k {
	case TimeoutRequest:
		return "request"
	case TimeoutNoProgress:
		return "no-progress"
	case TimeoutTotal:
		return "total"
	}
	return fmt.Sprintf("TimeoutKind(%d)", int(k))
}

// TimeoutError reports a tool call ended by one of its time limits. It is
// the Err of the call's *TransportError (errors.As finds it), and it
// matches context.DeadlineExceeded with errors.Is.
type TimeoutError struct {
	// Kind is the limit that fired.
	Kind TimeoutKind
	// Limit is that limit's length.
	Limit time.Duration
	// Setting names where the limit was set: "CallOptions.Timeout",
	// "ClientOptions.Timeout", "ToolTransform.Timeout" (a config file's
	// "timeout" of a tool), "CallOptions.MaxTotalTimeout", ...
	Setting string
	// Progress counts the progress notifications the call got (counted
	// when the timeout restarts on progress).
	Progress int
}

func (e *TimeoutError) Error() string {
	switch e.Kind {
	case TimeoutNoProgress:
		return fmt.Sprintf("no answer and no progress for %v (%s, reset on progress; %d progress notifications before): %v", e.Limit, e.Setting, e.Progress, context.DeadlineExceeded)
	case TimeoutTotal:
		return fmt.Sprintf("no answer within the overall maximum of %v (%s; %d progress notifications): %v", e.Limit, e.Setting, e.Progress, context.DeadlineExceeded)
	}
	return fmt.Sprintf("no answer within %v (%s): %v", e.Limit, e.Setting, context.DeadlineExceeded)
}

// Unwrap returns context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// Limits are the time limits of one call, and where each was set (for
// the *TimeoutError that says which one ended it).
type Limits struct {
	Timeout      time.Duration
	TimeoutFrom  string
	MaxTotal     time.Duration
	MaxTotalFrom string
}

// Deadline bounds one attempt of a call by its limits; with
// resetOnProgress the timeout restarts on each progress notification. It
// returns the bounded context, the function to call on each of the call's
// progress notifications (it restarts the timeout when it resets on
// progress, and counts them), and stop, which must be called when the
// attempt ends. With no limits, ctx is returned as it is and progressed is
// nil.
func Deadline(ctx context.Context, t Limits, resetOnProgress bool) (_ context.Context, progressed func(), stop func()) {
	if t.Timeout == 0 && t.MaxTotal == 0 {
		return ctx, nil, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	d := &deadline{cancel: cancel}
	var idle *time.Timer
	if t.Timeout > 0 {
		kind := TimeoutRequest
		if resetOnProgress {
			kind = TimeoutNoProgress
		}
		idle = time.AfterFunc(t.Timeout, func() { d.fire(kind, t.Timeout, t.TimeoutFrom) })
	}
	var total *time.Timer
	if t.MaxTotal > 0 {
		total = time.AfterFunc(t.MaxTotal, func() { d.fire(TimeoutTotal, t.MaxTotal, t.MaxTotalFrom) })
	}
	if idle != nil && resetOnProgress {
		progressed = func() { d.progressed(idle, t.Timeout) }
	}
	stop = func() {
		d.end()
		if idle != nil {
			idle.Stop()
		}
		if total != nil {
			total.Stop()
		}
		cancel(nil)
	}
	return ctx, progressed, stop
}

// deadline is the state of one call's timers.
type deadline struct {
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	done     bool // fired or ended: timers are no longer reset
	progress int
}

func (d *deadline) fire(kind TimeoutKind, limit time.Duration, setting string) {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return
	}
	d.done = true
	n := d.progress
	d.mu.Unlock()
	d.cancel(&TimeoutError{Kind: kind, Limit: limit, Setting: setting, Progress: n})
}

// progressed counts a progress notification and restarts idle, if given,
// unless the call has ended.
func (d *deadline) progressed(idle *time.Timer, after time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.progress++
	if idle != nil {
		idle.Reset(after)
	}
}

func (d *deadline) end() {
	d.mu.Lock()
	d.done = true
	d.mu.Unlock()
}
