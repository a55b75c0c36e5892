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
		Dir:             cmd.Dir,
		StderrLines:     c.opts.StderrLines,
		OnStderr:        onStderr,
		MaxMessageBytes: c.opts.MaxMessageBytes,
		StopGrace:       c.opts.closeGrace(),
		OnStrayLine: func(line string) {
			c.log.Warn("server wrote a non-JSON line to stdout (logs belong on stderr); skipped", "line", line)
		},
		Observer: c.obs,
		OnStart:  func(conn *stdio.Conn) { s.stdio = conn },
		// backlogMiddleware reports handled messages and barriers.
		HoldResults: true,
	}
}
