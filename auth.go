package mcpadapter

import (
	"net/http"
)

// Auth authenticates a Client's HTTP requests. Use BearerToken for a static
// token, or AuthFunc for anything that can be written as an
// http.RoundTripper.
type Auth interface {
	// wrap returns a RoundTripper that authenticates requests sent through next.
	wrap(next http.RoundTripper) http.RoundTripper
}

// BearerToken sends "Authorization: Bearer token" with every request.
func BearerToken(token string) Auth { return bearerAuth(token) }

type bearerAuth string

func (b bearerAuth) wrap(next http.RoundTripper) http.RoundTripper {
	return headerTransport{next: next, set: map[string]string{"Authorization": "Bearer " + string(b)}}
}

// AuthFunc authenticates with a RoundTripper built around the next one.
type AuthFunc func(next http.RoundTripper) http.RoundTripper

func (f AuthFunc) wrap(next http.RoundTripper) http.RoundTripper { return f(next) }

// headerTransport sets fixed headers on each request.
type headerTransport struct {
	next http.RoundTripper
	set  map[string]string
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.set {
		req.Header.Set(k, v)
	}
	return h.next.RoundTrip(req)
}
