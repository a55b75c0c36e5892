package mcpadapter

import (
	"net/http"
	"net/url"

	"github.com/mcpadapter/mcpadapter/internal/httplayer"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Auth authenticates a Client's HTTP requests. Use BearerToken for a static
// token, *OAuth for the MCP authorization flow, or AuthFunc for anything
// that can be written as an http.RoundTripper.
type Auth interface {
	// wrap returns a RoundTripper that authenticates requests sent through next.
	wrap(next http.RoundTripper) http.RoundTripper
}

// BearerToken sends "Authorization: Bearer token" with every request to the
// server's origin.
func BearerToken(token string) Auth { return bearerAuth(token) }

type bearerAuth string

func (b bearerAuth) wrap(next http.RoundTripper) http.RoundTripper {
	return httplayer.Headers{Next: next, Set: map[string]string{"Authorization": "Bearer " + string(b)}}
}

// AuthFunc authenticates with a RoundTripper built around the next one. It
// sees only requests to the server's origin (scheme, host and port of its
// URL); requests anywhere else, such as a redirect to another host, bypass
// it.
type AuthFunc func(next http.RoundTripper) http.RoundTripper

func (f AuthFunc) wrap(next http.RoundTripper) http.RoundTripper { return f(next) }

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
	if u, err := url.Parse(c.ep.URL); err == nil {
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
