package mcpadapter

import (
	"net/http"

	"github.com/mcpadapter/mcpadapter/internal/httplayer"
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
