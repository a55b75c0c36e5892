package testauth

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// exchange checks a token exchange (RFC 8693) of an access token the
// server signed and returns the grant of the token it issues: for the
// subject's user, the resource and scopes asked for (BaseScope when none
// is). It answers the refusals itself (ok false). s.mu is held.
func (s *Server) exchange(w http.ResponseWriter, f url.Values, clientID string) (g grant, ok bool) {
	refuse := func(code, why string) (grant, bool) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": why})
		return grant{}, false
	}
	switch {
	case !s.opts.TokenExchange:
		return refuse("unsupported_grant_type", "no token exchange here")
	case f.Get("subject_token_type") != oauthflow.TokenTypeAccessToken:
		return refuse("invalid_request", "the subject token must be an access token")
	case f.Get("resource") == "":
		return refuse("invalid_target", "no resource")
	}
	sub, err := s.subjectOf(f.Get("subject_token"))
	if err != nil {
		return refuse("invalid_grant", "the subject token: "+err.Error())
	}
	if slices.Contains(s.opts.RefuseExchange, sub) {
		return refuse("invalid_grant", "this subject may not have its token exchanged")
	}
	scopes := strings.Fields(f.Get("scope"))
	if len(scopes) == 0 {
		scopes = []string{BaseScope}
	}
	s.counts.TokenExchanges++
	return grant{clientID: clientID, scopes: scopes, resource: f.Get("resource"), user: sub}, true
}

// Subject verifies a JWT access token s signed (SignToken), not expired,
// and returns its sub.
func (s *Server) Subject(tok string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subjectOf(tok)
}

// subjectOf verifies a JWT access token signed by one of the server's
// keys, not expired, and returns its sub. s.mu is held.
func (s *Server) subjectOf(tok string) (string, error) {
	j, err := oauthflow.ParseJWT(tok)
	if err != nil {
		return "", err
	}
	verified := false
	for _, k := range s.signing {
		if j.Verify(k.key.Public()) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return "", errors.New("not signed by this server")
	}
	if exp, ok := j.Claims["exp"].(float64); !ok || time.Unix(int64(exp), 0).Before(time.Now()) {
		return "", errors.New("expired")
	}
	sub, _ := j.Claims["sub"].(string)
	if sub == "" {
		return "", errors.New("no sub")
	}
	return sub, nil
}
