package mcpadapter

import (
	"net"
	"net/http"
	"net/url"
	"strings"
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
	return headerTransport{next: next, set: map[string]string{"Authorization": "Bearer " + string(b)}}
}

// AuthFunc authenticates with a RoundTripper built around the next one. It
// sees only requests to the server's origin (scheme, host and port of its
// URL); requests anywhere else, such as a redirect to another host, bypass
// it.
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

// originGate sends requests for one origin through the authenticating
// RoundTripper and every other request around it, without the secrets:
// credentials go only to the origin they were given for, even when a
// redirect or an SSE endpoint event points elsewhere.
type originGate struct {
	origin string
	authed http.RoundTripper
	plain  http.RoundTripper
	strip  []string // header names that must not leave the origin
}

func (g originGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if sameOrigin(req.URL, g.origin) {
		return g.authed.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for _, h := range g.strip {
		req.Header.Del(h)
	}
	return g.plain.RoundTrip(req)
}

// sameOrigin reports whether originOf(u) == origin, without building
// originOf(u): it is asked for every request.
func sameOrigin(u *url.URL, origin string) bool {
	port := portOf(u)
	// strings.ToLower returns a string already in lower case as it is.
	host := strings.ToLower(u.Hostname())
	rest, ok := strings.CutPrefix(origin, strings.ToLower(u.Scheme))
	if !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, "://"); !ok {
		return false
	}
	if strings.IndexByte(host, ':') >= 0 { // as net.JoinHostPort writes it
		if rest, ok = strings.CutPrefix(rest, "["); !ok {
			return false
		}
		if rest, ok = strings.CutPrefix(rest, host); !ok {
			return false
		}
		rest, ok = strings.CutPrefix(rest, "]")
	} else {
		rest, ok = strings.CutPrefix(rest, host)
	}
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ":")
	return ok && rest == port
}

// portOf returns u's port, or its scheme's default port.
func portOf(u *url.URL) string {
	if port := u.Port(); port != "" {
		return port
	}
	switch u.Scheme {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// originOf returns scheme://host:port of u, with the default port filled
// in and the host in lower case.
func originOf(u *url.URL) string {
	port := portOf(u)
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
