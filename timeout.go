package mcpadapter

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

// callTimeouts are the time limits of one call, and where each was set.
type callTimeouts struct {
	timeout         time.Duration
	timeoutFrom     string
	resetOnProgress bool
	maxTotal        time.Duration
	maxTotalFrom    string
}

// timeouts returns the limits o sets.
func (o *CallOptions) timeouts() callTimeouts {
	t := callTimeouts{resetOnProgress: o.ResetTimeoutOnProgress}
	switch {
	case o.Timeout > 0:
		t.timeout, t.timeoutFrom = o.Timeout, "CallOptions.Timeout"
	case o.toolTimeout > 0:
		t.timeout, t.timeoutFrom = o.toolTimeout, "the tool's timeout (ToolTransform.Timeout, a config file's tools.<name>.timeout)"
	}
	if o.MaxTotalTimeout > 0 {
		t.maxTotal, t.maxTotalFrom = o.MaxTotalTimeout, "CallOptions.MaxTotalTimeout"
	}
	return t
}

// effectiveTimeouts returns the call's limits: its own, else the
// tool's, else the client's.
func (c *Client) effectiveTimeouts(tc *toolCall, clientTimeout time.Duration) callTimeouts {
	t := tc.timeouts
	if t.timeout == 0 && clientTimeout > 0 {
		t.timeout, t.timeoutFrom = clientTimeout, "ClientOptions.Timeout"
	}
	if t.maxTotal == 0 && c.opts.MaxTotalTimeout > 0 {
		t.maxTotal, t.maxTotalFrom = c.opts.MaxTotalTimeout, "ClientOptions.MaxTotalTimeout"
	}
	t.resetOnProgress = t.resetOnProgress || c.opts.ResetTimeoutOnProgress
	return t
}

// callDeadline bounds one attempt of a tool call by its limits (the call's
// own, the tool's, or clientTimeout and the ClientOptions). It returns the
// bounded context, the progress function to route the call's
// notifications to (which also resets the timeout when it restarts on
// progress), and stop, which must be called when the attempt ends.
func (c *Client) callDeadline(ctx context.Context, tc *toolCall, clientTimeout time.Duration) (context.Context, func(Progress), func()) {
	t := c.effectiveTimeouts(tc, clientTimeout)
	if t.timeout == 0 && t.maxTotal == 0 {
		return ctx, tc.progress, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	d := &deadline{cancel: cancel}
	var idle *time.Timer
	if t.timeout > 0 {
		kind := TimeoutRequest
		if t.resetOnProgress {
			kind = TimeoutNoProgress
		}
		idle = time.AfterFunc(t.timeout, func() { d.fire(kind, t.timeout, t.timeoutFrom) })
	}
	var total *time.Timer
	if t.maxTotal > 0 {
		total = time.AfterFunc(t.maxTotal, func() { d.fire(TimeoutTotal, t.maxTotal, t.maxTotalFrom) })
	}
	progress := tc.progress
	if idle != nil && t.resetOnProgress {
		user := tc.progress
		progress = func(p Progress) {
			d.progressed(idle, t.timeout)
			if user != nil {
				user(p)
			}
		}
	}
	stop := func() {
		d.end()
		if idle != nil {
			idle.Stop()
		}
		if total != nil {
			total.Stop()
		}
		cancel(nil)
	}
	return ctx, progress, stop
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
