package mcpadapter

import "github.com/mcpadapter/mcpadapter/internal/stdio"

// DefaultMaxMessageBytes is the default limit on one message from a stdio
// server (ClientOptions.MaxMessageBytes).
const DefaultMaxMessageBytes = stdio.DefaultMaxMessageBytes

// stdioTransport returns the transport that runs cmd for one connect
// attempt of s, with the client's options; the connection it makes is
// recorded in s.stdio, for diagnostics and the backlog.
func (c *Client) stdioTransport(cmd Command, s *session) *stdio.Transport {
	var onStderr func(string)
	if h := c.opts.StderrHandler; h != nil {
		server := c.name
		onStderr = func(line string) { h(server, line) }
	}
	return &stdio.Transport{
		Path:            cmd.Path,
		Args:            cmd.Args,
		Env:             cmd.Env,
		InheritEnv:      cmd.InheritEnv,
		Dir:             cmd.Dir,
		StderrLines:     c.opts.StderrLines,
		OnStderr:        onStderr,
		MaxMessageBytes: c.opts.MaxMessageBytes,
		StopGrace:       c.opts.closeGrace(),
		OnSkip:          c.logSkip,
		Observer:        c.obs,
		OnStart:         func(conn *stdio.Conn) { s.stdio = conn },
		// backlogMiddleware reports handled messages and barriers.
		HoldResults: true,
	}
}

// logSkip logs a line of a stdio server's stdout that was skipped, or a
// summary of the lines skipped without a record each (internal/stdio
// rate-limits them: a server printing a million lines makes a few
// records).
func (c *Client) logSkip(s stdio.Skip) {
	switch {
	case s.Suppressed > 0:
		c.log.Warn("server wrote more lines to stdout that were skipped (non-JSON, or responses that could not be decoded); not logged one by one",
			"skipped", s.Suppressed, "last", s.Line)
	case s.Err != nil:
		c.log.Warn("server sent a response that could not be decoded; its call fails", "error", s.Err, "line", s.Line)
	default:
		c.log.Warn("server wrote a non-JSON line to stdout (logs belong on stderr); skipped", "line", s.Line)
	}
}
