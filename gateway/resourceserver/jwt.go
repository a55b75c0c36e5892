package resourceserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// A grant is what an accepted credential says: whom it is for, its
// scopes, its expiry, the DPoP key it is bound to, and its claims.
type grant struct {
	issuer    string
	subject   string
	clientID  string
	scopes    []string
	expires   time.Time
	jkt       string // cnf.jkt: the thumbprint of the DPoP key, or ""
	claims    map[string]any
	principal string
	// keys and gen are the key set that verified a JWT and its generation.
	keys *keySet
	gen  uint64
}

// looksLikeJWS reports whether a token has the shape of a JWS compact
// serialization: three base64url parts.
func looksLikeJWS(tok string) bool {
	if strings.Count(tok, ".") != 2 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// unverifiedIssuer returns the iss claim of a JWS, read without checking
// anything: only to choose whose keys to check it with.
func unverifiedIssuer(tok *jwt.JSONWebToken) string {
	var c struct {
		Issuer string `json:"iss"`
	}
	if tok.UnsafeClaimsWithoutVerification(&c) != nil {
		return ""
	}
	return c.Issuer
}

// verifyJWT checks a JWT access token of one of the Guard's issuers and
// returns its grant. A token that fails is the token's fault (an
// invalidTokenError) unless the issuer's keys could not be had.
func (g *Guard) verifyJWT(ctx context.Context, tok *jwt.JSONWebToken, iss string, now time.Time) (*grant, error) {
	if len(tok.Headers) != 1 {
		return nil, invalidToken("a JWS with %d signatures", len(tok.Headers))
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); strings.EqualFold(typ, "dpop+jwt") {
		return nil, invalidToken("a DPoP proof is not an access token")
	}
	ks := g.keys[iss]
	if ks == nil {
		return nil, invalidToken("issuer %q is not trusted", iss)
	}
	keys, gen, err := ks.candidates(ctx, h.KeyID, now)
	if err != nil {
		var ue *unavailableError
		if errors.As(err, &ue) {
			return nil, err
		}
		return nil, invalidToken("%v", err)
	}
	var std jwt.Claims
	var all map[string]any
	verified := false
	for i := range keys {
		if !keyFits(&keys[i], h.Algorithm) {
			continue
		}
		if tok.Claims(keys[i].Key, &std, &all) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, invalidToken("the signature (alg %s, kid %q) matches no key of %s", h.Algorithm, h.KeyID, iss)
	}
	if std.Expiry == nil {
		return nil, invalidToken("the token has no exp")
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: iss, AnyAudience: jwt.Audience{g.resource}, Time: now}, g.leeway)
	if err != nil {
		return nil, invalidToken("%s", claimProblem(err, &std))
	}
	gr := &grant{
		issuer:   iss,
		subject:  std.Subject,
		clientID: stringClaim(all, "client_id"),
		scopes:   scopesOf(all),
		expires:  std.Expiry.Time(),
		jkt:      jktOf(all),
		claims:   all,
		keys:     ks,
		gen:      gen,
	}
	return gr, nil
}

// claimProblem says which claim failed, without the token.
func claimProblem(err error, c *jwt.Claims) string {
	switch {
	case errors.Is(err, jwt.ErrInvalidAudience):
		return fmt.Sprintf("the token is for audience %q, not this gateway", []string(c.Audience))
	case errors.Is(err, jwt.ErrExpired):
		return "the token expired at " + c.Expiry.Time().UTC().Format(time.RFC3339)
	case errors.Is(err, jwt.ErrNotValidYet):
		return "the token is not valid before " + c.NotBefore.Time().UTC().Format(time.RFC3339)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "the token was issued in the future"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return fmt.Sprintf("issuer %q", c.Issuer)
	}
	return err.Error()
}

// keyFits reports whether key may verify a signature of alg: its type
// (and curve) is alg's, and its own alg, if it names one, is alg.
func keyFits(k *jose.JSONWebKey, alg string) bool {
	if k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return pub.Curve == elliptic.P256()
		case "ES384":
			return pub.Curve == elliptic.P384()
		case "ES512":
			return pub.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

func stringClaim(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// scopesOf reads the scopes of a token or introspection answer: "scope",
// a space-separated string (RFC 9068, RFC 7662), or "scp", a list or a
// string (as some identity providers write it).
func scopesOf(m map[string]any) []string {
	if s, ok := m["scope"].(string); ok {
		return strings.Fields(s)
	}
	switch v := m["scp"].(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// jktOf returns cnf.jkt, the thumbprint of the key a token is bound to.
func jktOf(m map[string]any) string {
	cnf, _ := m["cnf"].(map[string]any)
	s, _ := cnf["jkt"].(string)
	return s
}

// audienceHas reports whether an aud member (a string or a list) names
// resource.
func audienceHas(aud any, resource string) bool {
	var a jwt.Audience
	b, err := json.Marshal(aud)
	if err != nil || a.UnmarshalJSON(b) != nil {
		return false
	}
	return a.Contains(resource)
}
