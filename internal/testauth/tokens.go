package testauth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// The server as the issuer of tokens for another resource server (a
// gateway): JWT access tokens (Options.JWT, RFC 9068) signed with keys it
// publishes at /jwks (rotated by RotateKey), and token introspection at
// /introspect (RFC 7662) for its clients with a secret.

// signingKey is one of the server's token signing keys.
type signingKey struct {
	kid string
	key crypto.Signer
}

// newSigningKey makes an RSA key (RS256) with a fresh key ID.
func newSigningKey() (signingKey, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return signingKey{}, err
	}
	return signingKey{kid: "k-" + rand.Text()[:10], key: k}, nil
}

// resource is the audience of the tokens the server issues when a token
// request names none: Options.Resource, or its own MCP endpoint.
func (s *Server) resource() string {
	if s.opts.Resource != "" {
		return s.opts.Resource
	}
	return s.MCPURL
}

// SigningKey returns the current token signing key and its key ID: what an
// attacker who has the public half (PublicKey) cannot use.
func (s *Server) SigningKey() (kid string, key crypto.Signer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.signing[len(s.signing)-1]
	return k.kid, k.key
}

// RotateKey makes a new signing key the current one. The JWKS keeps the
// previous keys unless dropOld is set.
func (s *Server) RotateKey(dropOld bool) (kid string, err error) {
	k, err := newSigningKey()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if dropOld {
		s.signing = nil
	}
	s.signing = append(s.signing, k)
	return k.kid, nil
}

// SignToken returns a JWT access token with claims, signed by the current
// key (RS256, its kid in the header). Missing iss, iat and exp are filled
// in (the server, now, in an hour); a nil value leaves a claim out.
func (s *Server) SignToken(claims map[string]any) (string, error) {
	kid, key := s.SigningKey()
	c := map[string]any{"iss": s.URL, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(), "jti": rand.Text()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return oauthflow.SignJWT(key, map[string]any{"kid": kid, "typ": "at+jwt"}, c)
}

// jwtFor makes the JWT access token of a grant (with s.mu held).
func (s *Server) jwtFor(g grant) (string, error) {
	k := s.signing[len(s.signing)-1]
	aud := g.resource
	if aud == "" {
		aud = s.resource()
	}
	now := time.Now()
	c := map[string]any{
		"iss": s.URL, "sub": g.clientID, "client_id": g.clientID, "aud": aud,
		"scope": strings.Join(g.scopes, " "), "iat": now.Unix(), "nbf": now.Unix(),
		"exp": g.expires.Unix(), "jti": rand.Text(),
	}
	if s.opts.UserSubject && g.user != "" {
		c["sub"] = g.user
	}
	if g.jkt != "" {
		c["cnf"] = map[string]any{"jkt": g.jkt}
	}
	return oauthflow.SignJWT(k.key, map[string]any{"kid": k.kid, "typ": "at+jwt"}, c)
}

func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.counts.JWKSRequests++
	keys := slices.Clone(s.signing)
	s.mu.Unlock()
	var out []map[string]any
	for _, k := range keys {
		jwk, err := oauthflow.PublicJWK(k.key)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		jwk["kid"], jwk["use"], jwk["alg"] = k.kid, "sig", "RS256"
		out = append(out, jwk)
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": out})
}

// introspect answers about a token the server issued (RFC 7662) to a
// client that authenticates with its secret.
func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Introspections++
	c, known := s.clients[id]
	if !ok || !known || c.secret == "" || c.secret != secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	g, found := s.tokens[r.PostForm.Get("token")]
	if !found || time.Now().After(g.expires) {
		writeJSON(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	aud := g.resource
	if aud == "" {
		aud = s.resource()
	}
	ans := map[string]any{
		"active": true, "iss": s.URL, "sub": g.clientID, "client_id": g.clientID, "aud": aud,
		"scope": strings.Join(g.scopes, " "), "exp": g.expires.Unix(), "token_type": "Bearer",
	}
	if g.jkt != "" {
		ans["cnf"] = map[string]any{"jkt": g.jkt}
		ans["token_type"] = "DPoP"
	}
	writeJSON(w, http.StatusOK, ans)
}

// String names the server, for test failures.
func (s *Server) String() string { return fmt.Sprintf("testauth at %s", s.URL) }
