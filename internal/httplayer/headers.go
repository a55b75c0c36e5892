package httplayer

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Headers sets fixed headers on each request.
type Headers struct {
	Next http.RoundTripper
	Set  map[string]string
}

// RoundTrip sends a copy of req with the headers set.
func (h Headers) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.Set {
		req.Header.Set(k, v)
	}
	return h.Next.RoundTrip(req)
}

// ContextHeaders sets the headers Of returns for the request's context. An
// error from Of refuses the request: it is returned as it is, and nothing
// is sent.
type ContextHeaders struct {
	Next http.RoundTripper
	// Of returns the headers of a request made with ctx (nil: none).
	Of func(ctx context.Context) (map[string]string, error)
}

// RoundTrip sends req, or a copy of it with the context's headers set.
func (t ContextHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	set, err := t.Of(req.Context())
	if err != nil {
		CloseBody(req)
		return nil, err
	}
	if len(set) == 0 {
		return t.Next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range set {
		req.Header.Set(k, v)
	}
	return t.Next.RoundTrip(req)
}

// ContextBearer sends "Authorization: Bearer" with the token Token returns
// for the request's context. An error from Token, or an empty token,
// refuses the request: Refused makes the error returned from the cause.
type ContextBearer struct {
	Next    http.RoundTripper
	Token   func(ctx context.Context) (string, error)
	Refused func(ctx context.Context, cause error) error
}

// RoundTrip sends a copy of req with the token.
func (t ContextBearer) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.Token(req.Context())
	if err == nil && tok == "" {
		err = errors.New("the token source returned an empty token")
	}
	if err != nil {
		CloseBody(req)
		return nil, t.Refused(req.Context(), err)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	return t.Next.RoundTrip(req)
}

// CloseBody closes req's body, as a RoundTripper must, also on error.
func CloseBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// ValidHeaderName reports whether k is an HTTP token.
func ValidHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// Partition names the connection of a principal with its identity
// headers over HTTP: requests of the same principal and headers share it.
// "" (no principal, no headers) is the connection made for no one.
func Partition(principal string, headers map[string]string) string {
	if principal == "" && len(headers) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(headers))
	var b strings.Builder
	b.WriteString("p:")
	b.WriteString(strconv.Quote(principal))
	for _, k := range keys {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(http.CanonicalHeaderKey(k)))
		b.WriteString("=")
		b.WriteString(strconv.Quote(headers[k]))
	}
	return b.String()
}

// identityReserved are the headers a request's identity may not set, with
// why.
var identityReserved = map[string]string{
	"Authorization":        "credentials come from ClientOptions.Auth; use PrincipalToken to pick one per principal",
	"Proxy-Authorization":  "credentials come from ClientOptions.Auth and the HTTP client",
	"Cookie":               "credentials come from ClientOptions.Auth",
	"Host":                 "the adapter sets it",
	"Content-Type":         "the transport sets it",
	"Content-Length":       "the transport sets it",
	"Accept":               "the transport sets it",
	"Mcp-Session-Id":       "the transport sets it",
	"Mcp-Protocol-Version": "the transport sets it",
	"Last-Event-Id":        "the transport sets it",
}

// CheckIdentityHeaders returns the first header of headers a request's
// identity (the root's CallIdentity) may not set, and why: one named
// twice in different cases, one the adapter owns (credentials, the
// transport's), a name that is not an HTTP token, a value with a line
// break or NUL. The header is "" for a header of the empty name: a
// header is refused when reason is not "", which is "" only when every
// header may be set.
func CheckIdentityHeaders(headers map[string]string) (header, reason string) {
	seen := make(map[string]bool, len(headers))
	for k, v := range headers {
		ck := http.CanonicalHeaderKey(k)
		if seen[ck] {
			// Which value would be sent would change from one request
			// to the next.
			return ck, "named twice, in different cases"
		}
		seen[ck] = true
		if why, ok := identityReserved[ck]; ok {
			return k, "the adapter owns this header: " + why
		}
		if !ValidHeaderName(k) {
			return k, "not a valid header name"
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			// The value is not repeated: it may be a secret.
			return k, "the value holds a line break or NUL"
		}
	}
	return "", ""
}

// HasAuthorization reports whether headers set an Authorization header.
func HasAuthorization(headers map[string]string) bool {
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
