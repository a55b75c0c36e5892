package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/httplayer"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// engineConfig is what the connection engine needs of c: its target and
// options as plain values, go-sdk's client, and the features' hooks (the
// HTTP layers of headers and credentials, telemetry, the cache).
func (c *Client) engineConfig() engine.Config {
	cfg := engine.Config{
		Name:            c.name,
		Kind:            engine.Kind(c.ep.kind),
		URL:             c.ep.url,
		FallbackSSE:     c.ep.fallbackSSE,
		Server:          c.ep.server,
		SDK:             c.sdk,
		Observer:        c.obs,
		Log:             c.log,
		ConnectTimeout:  c.opts.connectTimeout(),
		ProbeTimeout:    c.opts.probeTimeout(),
		CloseGrace:      c.opts.closeGrace(),
		MaxMessageBytes: c.opts.maxMessageBytes(),
		Version:         c.opts.ProtocolVersion,
		HTTPClient:      c.opts.HTTPClient,
		WrapHTTP:        c.wrapHTTP,
		OAuth:           c.oauth,
		OnLost:          c.cache.ForgetDiscover,
		Partition:       partitionOf,
		Detach:          detachIdentity,
		MaxSessions:     c.opts.maxSessions(),
		IdleTimeout:     c.opts.sessionIdleTimeout(),
		FastPath:        !c.opts.DisableFastPath,
		Trace:           c.opts.Trace,
	}
	if c.ep.kind == kindStdio {
		cfg.Stdio = c.stdioTransport(c.ep.command)
	}
	if p := c.opts.naming; p != nil {
		cfg.NameOf, cfg.OnDial = p.Peek, c.onDial
	}
	if c.opts.Telemetry != nil {
		cfg.StartConnect = func(caller, conn context.Context) (context.Context, func(*engine.Session, error)) {
			// The span belongs to the caller's trace; the connection keeps
			// none of the caller's values.
			_, end := c.startOp(caller, "connect", "")
			return conn, func(s *engine.Session, err error) {
				r := OperationResult{Err: err, ErrorType: ErrorType(err)}
				if s != nil {
					r.SessionID, r.ProtocolVersion = s.ID(), s.ProtocolVersion()
				}
				end(r)
			}
		}
	}
	return cfg
}

// wrapHTTP adds the client's layers above tap, the Tap of one HTTP
// connection: DPoP, OAuth for the SSE transport (go-sdk's streamable
// client does its own, with the same handler), Auth, the per-call
// identity's headers, the static headers, and the origin gate, which sends
// requests to other origins through tap without credentials.
func (c *Client) wrapHTTP(tap http.RoundTripper, sse bool) http.RoundTripper {
	rt := tap
	if c.oauthFlow != nil && c.oauthFlow.DPoP != nil {
		// Below go-sdk's and oauthflow's "Bearer": a bound token goes as DPoP.
		rt = c.oauthFlow.DPoP.ResourceTransport(rt)
	}
	if h := c.oauth(); h != nil && sse {
		rt = oauthflow.NewTransport(h, rt)
	}
	if c.webAuth != nil {
		if d := c.webAuth.DPoP(); d != nil {
			rt = d.ResourceTransport(rt) // below WebSignIn's "Bearer", as for OAuth
		}
		rt = c.webAuth.Transport(rt)
	}
	if c.opts.Auth != nil {
		rt = c.opts.Auth.wrap(rt)
	}
	// Inside the static headers, so a CallIdentity's win; outside Auth,
	// which has the last word on credentials.
	rt = httplayer.ContextHeaders{Next: rt, Of: identityHeaders}
	if len(c.opts.Headers) > 0 {
		rt = httplayer.Headers{Next: rt, Set: c.opts.Headers}
	}
	strip := []string{"Authorization", "Cookie"}
	for k := range c.opts.Headers {
		strip = append(strip, k)
	}
	if u, err := url.Parse(c.ep.url); err == nil {
		rt = httplayer.OriginGate{Origin: httplayer.OriginOf(u), Authed: rt, Plain: tap, Strip: strip}
	}
	return rt
}

// oauth returns the OAuth handler for HTTP requests, or nil.
func (c *Client) oauth() auth.OAuthHandler {
	switch {
	case c.opts.OAuthHandler != nil:
		return c.opts.OAuthHandler
	case c.oauthFlow != nil:
		return c.oauthFlow
	}
	return nil
}

// stdioTransport returns the transport that runs cmd, with the client's
// options.
func (c *Client) stdioTransport(cmd Command) stdio.Transport {
	var onStderr func(string)
	if h := c.opts.StderrHandler; h != nil {
		server := c.name
		onStderr = func(line string) { h(server, line) }
		if p := c.opts.naming; p != nil {
			onStderr = func(line string) { p.Do(len(line), func(name string) { h(name, line) }) }
		}
	}
	return stdio.Transport{
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
		// engine.BacklogMiddleware reports handled messages and barriers.
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

// infoOf describes s, a connection of c.
func (c *Client) infoOf(s *engine.Session) ServerInfo {
	res := s.SDK().InitializeResult()
	return ServerInfo{
		Name:            c.name,
		Transport:       s.Transport(),
		ProtocolVersion: s.ProtocolVersion(),
		Era:             eraOf(s.ProtocolVersion()),
		Implementation:  res.ServerInfo,
		Capabilities:    res.Capabilities,
		Instructions:    res.Instructions,
		ConnectedAt:     s.ConnectedAt(),
		ConnectTime:     s.ConnectTime(),
	}
}

// session returns the live session, connecting if there is none.
func (c *Client) session(ctx context.Context) (*engine.Session, error) { return c.eng.Session(ctx) }

// request describes a request bounded by ClientOptions.Timeout.
func (c *Client) request(op, tool string) engine.Request {
	return engine.Request{Op: op, Tool: tool, Timeout: c.opts.Timeout}
}

// send runs fn on the live session (see engine.Engine.Send): it is the one
// way every request reaches the server.
func (c *Client) send(ctx context.Context, r engine.Request, fn func(context.Context, *engine.Session) error) error {
	return c.eng.Send(ctx, r, fn)
}

// transportError wraps err as a *TransportError of this client's server
// (see engine.Engine.TransportError).
func (c *Client) transportError(s *engine.Session, op, tool string, err error) error {
	return c.eng.TransportError(s, op, tool, err)
}

// retire makes the next request connect anew; the requests in flight
// finish first.
func (c *Client) retire() { c.eng.Retire() }

// A server that answers server/discover with 401 or 403 speaks the
// 2026-07-28 protocol and refuses this client's authorization. go-sdk
// falls back to the initialize handshake on any failure of
// server/discover, and the client then to legacy SSE, which hides the
// refusal behind the old transports' answers ("Not Found"). The handshake
// middleware records the refusal and ends the connect with it instead.

// refusedError is a server's authorization refusal of a request: HTTP 401
// or 403, with what its WWW-Authenticate header said.
type refusedError struct {
	status    int
	challenge string // the header's error and description, or ""
	err       error  // go-sdk's error
}

func (e *refusedError) Error() string {
	msg := fmt.Sprintf("the server refused authorization: HTTP %d %s", e.status, http.StatusText(e.status))
	if e.challenge != "" {
		msg += ", WWW-Authenticate " + e.challenge
	}
	return msg
}

func (e *refusedError) Unwrap() error { return e.err }

// authRefusal returns the error for a request that failed with err after
// its POST was answered with 401 or 403, or nil if it was not. A failed
// sign-in (*AuthorizationError) or one to make (*SignInRequiredError) is
// returned as it is.
func authRefusal(rec *wire.RequestStatus, err error) error {
	status := rec.Status()
	if err == nil || (status != http.StatusUnauthorized && status != http.StatusForbidden) {
		return nil
	}
	var ae *AuthorizationError
	var sr *SignInRequiredError
	if errors.As(err, &ae) || errors.As(err, &sr) {
		return err
	}
	return &refusedError{status: status, challenge: describeChallenge(rec.Challenge()), err: err}
}

// describeChallenge says what a WWW-Authenticate header asks: the error,
// its description and the scope of its Bearer challenge, quoted (the
// server chose them; they are cut to 200 bytes each). The
// resource_metadata URL is left out.
func describeChallenge(header []string) string {
	cs, err := oauthex.ParseWWWAuthenticate(header)
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if !strings.EqualFold(c.Scheme, "bearer") {
			continue
		}
		var parts []string
		for _, k := range []string{"error", "error_description", "scope"} {
			if v := c.Params[k]; v != "" {
				if len(v) > 200 {
					v = strings.ToValidUTF8(v[:200], "") + "..."
				}
				parts = append(parts, k+" "+strconv.Quote(v))
			}
		}
		return strings.Join(parts, ", ")
	}
	return ""
}
