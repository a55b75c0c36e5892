package mcpadapter

import (
	"context"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
)

// TimeoutKind says which limit ended a tool call: TimeoutRequest,
// TimeoutNoProgress or TimeoutTotal. Its String method returns "request",
// "no-progress" or "total".
type TimeoutKind = engine.TimeoutKind

const (
	// TimeoutRequest: no answer within the call's timeout.
	TimeoutRequest = engine.TimeoutRequest
	// TimeoutNoProgress: with ResetTimeoutOnProgress, the server reported
	// no progress (and sent no answer) for the call's timeout.
	TimeoutNoProgress = engine.TimeoutNoProgress
	// TimeoutTotal: the call ran longer than its MaxTotalTimeout, however
	// often the server reported progress.
	TimeoutTotal = engine.TimeoutTotal
)

// TimeoutError reports a tool call ended by one of its time limits. It is
// the Err of the call's *TransportError (errors.As finds it), and it
// matches context.DeadlineExceeded with errors.Is. Its fields: Kind, the
// limit that fired; Limit, that limit's length; Setting, where the limit
// was set ("CallOptions.Timeout", "ClientOptions.Timeout",
// "ToolTransform.Timeout" (a config file's "timeout" of a tool),
// "CallOptions.MaxTotalTimeout", ...); Progress, the progress
// notifications the call got (counted when the timeout restarts on
// progress).
type TimeoutError = engine.TimeoutError

// timeouts returns the limits o sets.
func (o *CallOptions) timeouts() engine.Limits {
	var t engine.Limits
	switch {
	case o.Timeout > 0:
		t.Timeout, t.TimeoutFrom = o.Timeout, "CallOptions.Timeout"
	case o.toolTimeout > 0:
		t.Timeout, t.TimeoutFrom = o.toolTimeout, "the tool's timeout (ToolTransform.Timeout, a config file's tools.<name>.timeout)"
	}
	if o.MaxTotalTimeout > 0 {
		t.MaxTotal, t.MaxTotalFrom = o.MaxTotalTimeout, "CallOptions.MaxTotalTimeout"
	}
	return t
}

// effectiveTimeouts returns the call's limits: its own, else the
// tool's, else the client's; and whether its timeout restarts on
// progress.
func (c *Client) effectiveTimeouts(tc *toolCall, clientTimeout time.Duration) (engine.Limits, bool) {
	t := tc.timeouts
	if t.Timeout == 0 && clientTimeout > 0 {
		t.Timeout, t.TimeoutFrom = clientTimeout, c.opts.timeoutSetting()
	}
	if t.MaxTotal == 0 && c.opts.MaxTotalTimeout > 0 {
		t.MaxTotal, t.MaxTotalFrom = c.opts.MaxTotalTimeout, c.opts.maxTotalSetting()
	}
	return t, tc.resetOnProgress || c.opts.ResetTimeoutOnProgress
}

// callDeadline bounds one attempt of a tool call by its limits (the call's
// own, the tool's, or clientTimeout and the ClientOptions). It returns the
// bounded context, the progress function to route the call's
// notifications to (which also resets the timeout when it restarts on
// progress), and stop, which must be called when the attempt ends.
func (c *Client) callDeadline(ctx context.Context, tc *toolCall, clientTimeout time.Duration) (context.Context, func(Progress), func()) {
	limits, reset := c.effectiveTimeouts(tc, clientTimeout)
	ctx, progressed, stop := engine.Deadline(ctx, limits, reset)
	if progressed == nil {
		return ctx, tc.progress, stop
	}
	user := tc.progress
	return ctx, func(p Progress) {
		progressed()
		if user != nil {
			user(p)
		}
	}, stop
}
