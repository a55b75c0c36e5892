package httplayer

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// OriginGate sends requests for one origin through the authenticating
// RoundTripper and every other request around it, without the secrets:
// credentials go only to the origin they were given for, even when a
// redirect or an SSE endpoint event points elsewhere.
type OriginGate struct {
	Origin string            // OriginOf the server's URL
	Authed http.RoundTripper // for requests to Origin
	Plain  http.RoundTripper // for any other request
	Strip  []string          // header names that must not leave the origin
}

// RoundTrip sends req through Authed or, stripped, through Plain.
func (g OriginGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if SameOrigin(req.URL, g.Origin) {
		return g.Authed.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for _, h := range g.Strip {
		req.Header.Del(h)
	}
	return g.Plain.RoundTrip(req)
}

// SameOrigin reports whether OriginOf(u) == origin, without building
// OriginOf(u): it is asked for every request.
func SameOrigin(u *url.URL, origin string) bool {
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

// OriginOf returns scheme://host:port of u, with the default port filled
// in and the host in lower case.
func OriginOf(u *url.URL) string {
	port := portOf(u)
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
