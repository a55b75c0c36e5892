package gateway

import (
	"context"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// callLimits are the time limits of one server's tool calls, as an
// mcpadapter.Client applies them to its own calls: a config entry's
// "timeout", "resetTimeoutOnProgress", "maxTotalTimeout" and per-tool
// "timeout" (else Options.Client's Timeout, ResetTimeoutOnProgress and
// MaxTotalTimeout, and ServerTransform.Tools' Timeout). Options.CallTimeout
// applies on top of them.
type callLimits struct {
	timeout, total time.Duration
	reset          bool                     // timeout restarts on progress
	tools          map[string]time.Duration // the tools' own timeouts, by the server's names
	// from says where timeout was set, for the error a client gets.
	from string
}

// limitsOf returns the limits of server s, built with base (the gateway's
// Options.Client, or the zero value) and tr (its Options.Transforms entry).
func limitsOf(s Server, base mcpadapter.ClientOptions, tr *mcpadapter.ServerTransform) callLimits {
	l := callLimits{timeout: base.Timeout, total: base.MaxTotalTimeout, reset: base.ResetTimeoutOnProgress, from: "the gateway's client options (Timeout)"}
	addTools := func(tools map[string]*mcpadapter.ToolTransform) {
		for name, t := range tools {
			if t == nil || t.Timeout <= 0 {
				continue
			}
			if l.tools == nil {
				l.tools = make(map[string]time.Duration)
			}
			l.tools[name] = t.Timeout
		}
	}
	if c := s.Config; c != nil {
		if c.Timeout > 0 {
			l.timeout, l.from = c.Timeout, "its config entry's \"timeout\""
		}
		if c.MaxTotalTimeout > 0 {
			l.total = c.MaxTotalTimeout
		}
		l.reset = l.reset || c.ResetTimeoutOnProgress
		addTools(c.Tools)
	}
	if tr != nil {
		addTools(tr.Tools)
	}
	return l
}

// forTool returns the timeout of a call of tool (the server's name for
// it) and where it was set.
func (l callLimits) forTool(tool string) (time.Duration, string) {
	if t, ok := l.tools[tool]; ok {
		return t, "the tool's \"timeout\""
	}
	return l.timeout, l.from
}

// bound bounds ctx by the limits of a call of tool that do not restart on
// progress: the call's timeout when it does not, and the total limit. It
// returns the timeout that restarts on progress (zero: none), to be
// watched with the call's progress.
func (l callLimits) bound(ctx context.Context, server, tool string) (_ context.Context, watched time.Duration, from string, cancel context.CancelFunc) {
	timeout, from := l.forTool(tool)
	cancels := []context.CancelFunc{}
	if timeout > 0 && !l.reset {
		var c context.CancelFunc
		ctx, c = context.WithTimeoutCause(ctx, timeout, &timeoutError{server: server, tool: tool, after: timeout, setting: from, absolute: true})
		cancels = append(cancels, c)
		timeout = 0
	}
	if l.total > 0 {
		var c context.CancelFunc
		ctx, c = context.WithTimeoutCause(ctx, l.total, &timeoutError{server: server, tool: tool, after: l.total, setting: "\"maxTotalTimeout\"", total: true})
		cancels = append(cancels, c)
	}
	return ctx, timeout, from, func() {
		for _, c := range cancels {
			c()
		}
	}
}

// callCap returns the cap on s's tool calls in flight: the smallest of
// the gateway's MaxCallsPerServer (n, zero meaning none), s's config
// entry's "maxConcurrentCalls" and base's MaxConcurrentCalls.
func callCap(n int, s Server, base mcpadapter.ClientOptions) int {
	lower := func(m int) {
		if m > 0 && (n <= 0 || m < n) {
			n = m
		}
	}
	lower(base.MaxConcurrentCalls)
	if s.Config != nil {
		lower(s.Config.MaxConcurrentCalls)
	}
	return n
}
