package testauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// The grants of the MCP authorization extensions: the client credentials
// grant with a private key JWT (Options.ClientKey), the JWT bearer grant
// (Options.AssertionKey: a workload's token, or an IdP's ID-JAG), and
// DPoP-bound tokens (Options.DPoP, Options.DPoPNonce). IdP is the
// enterprise identity provider of the token exchange.

// verifyJWT checks a JWT's signature with key, that aud (a string or a
// list) holds audience, that it has not expired, and returns its claims.
func verifyJWT(token string, key crypto.PublicKey, audience string) (map[string]any, error) {
	j, err := oauthflow.ParseJWT(token)
	if err != nil {
		return nil, err
	}
	if err := j.Verify(key); err != nil {
		return nil, err
	}
	if !audienceHas(j.Claims["aud"], audience) {
		return nil, fmt.Errorf("aud %v is not %s", j.Claims["aud"], audience)
	}
	exp, ok := j.Claims["exp"].(float64)
	if !ok || time.Unix(int64(exp), 0).Before(time.Now()) {
		return nil, errors.New("expired or no exp")
	}
	return j.Claims, nil
}

func audienceHas(aud any, want string) bool {
	trim := func(s string) string { return strings.TrimRight(s, "/") }
	switch a := aud.(type) {
	case string:
		return trim(a) == trim(want)
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok && trim(s) == trim(want) {
				return true
			}
		}
	}
	return false
}

// checkClientAssertion authenticates a private_key_jwt client.
func (s *Server) checkClientAssertion(form map[string][]string) (string, error) {
	get := func(k string) string {
		if v := form[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if get("client_assertion_type") != oauthflow.AssertionTypeJWTBearer {
		return "", errors.New("client_assertion_type")
	}
	if s.opts.ClientKey == nil {
		return "", errors.New("no client key")
	}
	claims, err := verifyJWT(get("client_assertion"), s.opts.ClientKey, s.URL)
	if err != nil {
		return "", err
	}
	if claims["iss"] != s.opts.ClientID || claims["sub"] != s.opts.ClientID {
		return "", errors.New("iss and sub must be the client ID")
	}
	return s.opts.ClientID, nil
}

// checkProof verifies a DPoP proof for method and url (and for the access
// token when token is not ""), and returns the thumbprint of its key.
// With a nonce ("" for none) the proof must carry it; errNonce says it
// does not.
func (s *Server) checkProof(proof, method, url, token, nonce string) (string, error) {
	if proof == "" || strings.Contains(proof, ",") {
		return "", errors.New("one DPoP proof is required")
	}
	j, err := oauthflow.ParseJWT(proof)
	if err != nil {
		return "", err
	}
	jwk, _ := j.Header["jwk"].(map[string]any)
	pub, err := oauthflow.JWKPublicKey(jwk)
	if err != nil {
		return "", err
	}
	if j.Header["typ"] != "dpop+jwt" {
		return "", errors.New("typ must be dpop+jwt")
	}
	if err := j.Verify(pub); err != nil {
		return "", err
	}
	iat, _ := j.Claims["iat"].(float64)
	jti, _ := j.Claims["jti"].(string)
	switch {
	case j.Claims["htm"] != method || j.Claims["htu"] != url:
		return "", fmt.Errorf("htm/htu %v %v, want %s %s", j.Claims["htm"], j.Claims["htu"], method, url)
	case jti == "" || time.Since(time.Unix(int64(iat), 0)).Abs() > 5*time.Minute:
		return "", errors.New("jti or iat")
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		if j.Claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", errors.New("ath does not match the token")
		}
	}
	if s.jtis[jti] {
		return "", errors.New("jti replayed")
	}
	s.jtis[jti] = true
	if nonce != "" && j.Claims["nonce"] != nonce {
		s.counts.NonceChallenges++
		return "", errNonce
	}
	return oauthflow.Thumbprint(jwk)
}

var errNonce = errors.New("use_dpop_nonce")

// resourceNonce is the nonce the MCP endpoint demands: not the token
// endpoint's, so that a client must answer both challenges.
func (s *Server) resourceNonce() string {
	if s.opts.DPoPNonce == "" {
		return ""
	}
	return s.opts.DPoPNonce + "-rs"
}

// IdP is an enterprise identity provider: it issues users' ID tokens and
// exchanges them (RFC 8693) for ID-JAGs for an authorization server that
// trusts its key (Options.AssertionKey = IdP.PublicKey()).
type IdP struct {
	URL      string // issuer; the token endpoint is URL + "/token"
	ClientID string // the client the ID tokens are for

	key *ecdsa.PrivateKey
	srv *httptest.Server

	mu        sync.Mutex
	exchanges int
	access    *Server        // whose access tokens it takes as subject tokens (AcceptAccessTokens)
	claims    map[string]any // claims overriding the ID-JAGs' (SetClaims)
	forms     []url.Values   // the token requests' forms, in order
}

// AcceptAccessTokens makes p exchange the access tokens s signed
// (SignToken; subject_token_type access_token) as well as its own ID
// tokens: a gateway's users' tokens, from the identity provider that is
// the gateway's authorization server.
func (p *IdP) AcceptAccessTokens(s *Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.access = s
}

// SetClaims makes the ID-JAGs p issues carry claims instead of those it
// would (an audience or resource of another's, say); nil ends it.
func (p *IdP) SetClaims(claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims = maps.Clone(claims)
}

// TokenRequests returns the forms of the token requests p received, in
// order.
func (p *IdP) TokenRequests() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]url.Values, len(p.forms))
	for i, f := range p.forms {
		out[i] = maps.Clone(f)
	}
	return out
}

// StartIdP starts an IdP on 127.0.0.1, closed by t's cleanup.
func StartIdP(t testing.TB, clientID string) *IdP {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &IdP{ClientID: clientID, key: key}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/token", p.token)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": p.URL, "token_endpoint": p.URL + "/token",
			"grant_types_supported": []string{oauthflow.GrantTokenExchange}})
	})
	p.srv = httptest.NewUnstartedServer(mux)
	p.srv.Listener = l
	p.srv.Start()
	p.URL = "http://" + l.Addr().String()
	t.Cleanup(p.srv.Close)
	return p
}

// PublicKey is the key ID-JAGs are signed with.
func (p *IdP) PublicKey() crypto.PublicKey { return p.key.Public() }

// Exchanges counts the token exchanges granted.
func (p *IdP) Exchanges() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exchanges
}

// IDToken returns an ID token for user.
func (p *IdP) IDToken(t testing.TB, user string) string {
	tok, err := oauthflow.SignJWT(p.key, nil, map[string]any{
		"iss": p.URL, "sub": user, "aud": p.ClientID,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (p *IdP) token(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/token" || r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	p.mu.Lock()
	p.forms = append(p.forms, maps.Clone(f))
	access, override := p.access, maps.Clone(p.claims)
	p.mu.Unlock()
	typ := f.Get("subject_token_type")
	if f.Get("grant_type") != oauthflow.GrantTokenExchange || (typ != oauthflow.TokenTypeIDToken && typ != oauthflow.TokenTypeAccessToken) ||
		f.Get("requested_token_type") != oauthflow.TokenTypeIDJAG || f.Get("audience") == "" || f.Get("resource") == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "not an ID-JAG token exchange"})
		return
	}
	var sub any
	switch {
	case typ == oauthflow.TokenTypeIDToken:
		claims, err := verifyJWT(f.Get("subject_token"), p.key.Public(), p.ClientID)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "bad ID token"})
			return
		}
		sub = claims["sub"]
	case access == nil:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "no access tokens taken here"})
		return
	default:
		s, err := access.Subject(f.Get("subject_token"))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "bad access token"})
			return
		}
		sub = s
	}
	claims := map[string]any{
		"iss": p.URL, "sub": sub, "aud": f.Get("audience"), "resource": f.Get("resource"),
		"client_id": f.Get("client_id"), "scope": f.Get("scope"),
		"iat": time.Now().Unix(), "exp": time.Now().Add(5 * time.Minute).Unix(), "jti": rand.Text(),
	}
	maps.Copy(claims, override)
	jag, err := oauthflow.SignJWT(p.key, map[string]any{"typ": "oauth-id-jag+jwt"}, claims)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	p.mu.Lock()
	p.exchanges++
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": oauthflow.TokenTypeIDJAG, "token_type": "N_A", "expires_in": 300})
}
