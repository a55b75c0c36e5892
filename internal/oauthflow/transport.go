package oauthflow

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// NewTransport returns a RoundTripper that authorizes the requests it
// sends through next with h, for go-sdk's SSE client, which has no OAuth
// of its own, the way its streamable client does: h's token on every
// request, and after a 401 or 403 one Authorize and one retry.
func NewTransport(h auth.OAuthHandler, next http.RoundTripper) http.RoundTripper {
	return &transport{h: h, next: next}
}

// transport is the RoundTripper NewTransport returns.
type transport struct {
	h    auth.OAuthHandler
	next http.RoundTripper
}

// RoundTrip sends req with a token, signing in and retrying once when the
// server asks.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	sent, resp, err := t.send(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // cannot send it again
	}
	if err := t.h.Authorize(req.Context(), sent, resp); err != nil {
		return nil, err
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		retry.Body = body
	}
	_, resp, err = t.send(retry)
	return resp, err
}

// send sends req with the handler's current token, if any, and returns
// the request as sent.
func (t *transport) send(req *http.Request) (*http.Request, *http.Response, error) {
	ts, err := t.h.TokenSource(req.Context())
	if err != nil {
		return nil, nil, err
	}
	if ts != nil {
		tok, err := ts.Token()
		var re *oauth2.RetrieveError
		switch {
		case err == nil:
			req = req.Clone(req.Context())
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
			// The refresh token is no good: send none, get a 401, and
			// sign in again.
		default:
			return nil, nil, fmt.Errorf("getting an OAuth token: %w", err)
		}
	}
	resp, err := t.next.RoundTrip(req)
	return req, resp, err
}
