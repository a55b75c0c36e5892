package oauthflow

import (
	"context"
	"crypto"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Grant types and token types of RFC 7523 and RFC 8693, and the
// identity assertion JWT authorization grant (ID-JAG) of the MCP
// enterprise-managed authorization extension.
const (
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	AssertionTypeJWTBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG         = "urn:ietf:params:oauth:token-type:id-jag"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
)

// Exchange is a token exchange request (RFC 8693 section 2.1): the
// subject token and its type, the type of token wanted, and the audience
// (the resource and scopes come from the Target it is made for).
type Exchange struct {
	SubjectToken, SubjectTokenType string
	RequestedTokenType             string
	Audience                       string
}

// form returns the token request of x for t.
func (x Exchange) form(t Target) url.Values {
	form := url.Values{
		"grant_type":         {GrantTokenExchange},
		"subject_token":      {x.SubjectToken},
		"subject_token_type": {x.SubjectTokenType},
	}
	if x.RequestedTokenType != "" {
		form.Set("requested_token_type", x.RequestedTokenType)
	}
	if x.Audience != "" {
		form.Set("audience", x.Audience)
	}
	return withTarget(form, t)
}

// ExchangeToken makes the token exchange x at the token endpoint of t's
// authorization server, authenticated as c, for t's resource and scopes.
// The subject token goes to that endpoint only; errors never quote it.
func ExchangeToken(ctx context.Context, hc *http.Client, t Target, x Exchange, c ClientAuth) (*oauth2.Token, error) {
	if x.SubjectToken == "" {
		return nil, errors.New("no subject token to exchange")
	}
	form := x.form(t)
	id, secret, err := c.apply(form, t)
	if err != nil {
		return nil, err
	}
	tok, err := PostToken(ctx, hc, t.AS.TokenEndpoint, form, id, secret)
	if err != nil {
		return nil, err
	}
	if it, _ := tok.Extra("issued_token_type").(string); x.RequestedTokenType != "" && it != "" && it != x.RequestedTokenType {
		return nil, fmt.Errorf("the authorization server issued a %q, not the %q asked for", it, x.RequestedTokenType)
	}
	return tok, nil
}

// AssertionSource returns a JWT to present (a workload identity token, an
// identity provider's ID token).
type AssertionSource func(ctx context.Context) (string, error)

// ClientAssertion returns a private_key_jwt client assertion (RFC 7523
// section 2.2): iss and sub the client ID, aud the authorization server's
// issuer, valid for five minutes.
func ClientAssertion(key crypto.Signer, clientID, audience string, now time.Time) (string, error) {
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	return SignJWT(key, map[string]any{"typ": "JWT"}, map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": b64.EncodeToString(jti),
	})
}

// ClientAuth is how a client authenticates at a token endpoint: a secret
// (HTTP Basic), a private key (private_key_jwt), or neither (client_id in
// the form).
type ClientAuth struct {
	ClientID     string
	ClientSecret string
	Key          crypto.Signer
}

// apply adds the client's authentication to form and returns the Basic
// credentials to send, if any.
func (c ClientAuth) apply(form url.Values, t Target) (id, secret string, err error) {
	switch {
	case c.Key != nil:
		aud := t.AS.Issuer
		if aud == "" {
			aud = t.AS.TokenEndpoint
		}
		a, err := ClientAssertion(c.Key, c.ClientID, aud, time.Now())
		if err != nil {
			return "", "", fmt.Errorf("signing the client assertion: %w", err)
		}
		form.Set("client_id", c.ClientID)
		form.Set("client_assertion_type", AssertionTypeJWTBearer)
		form.Set("client_assertion", a)
		return "", "", nil
	case c.ClientSecret != "":
		return c.ClientID, c.ClientSecret, nil
	case c.ClientID != "":
		form.Set("client_id", c.ClientID)
	}
	return "", "", nil
}

func withTarget(form url.Values, t Target) url.Values {
	if len(t.Scopes) > 0 {
		form.Set("scope", strings.Join(t.Scopes, " "))
	}
	if t.Resource != "" {
		form.Set("resource", t.Resource)
	}
	return form
}

// ClientCredentialsGrant is the client credentials grant (RFC 6749 section
// 4.4) with the client's secret or private key.
func ClientCredentialsGrant(c ClientAuth) Grant {
	return func(ctx context.Context, hc *http.Client, t Target) (*oauth2.Token, error) {
		form := withTarget(url.Values{"grant_type": {GrantClientCredentials}}, t)
		id, secret, err := c.apply(form, t)
		if err != nil {
			return nil, err
		}
		return PostToken(ctx, hc, t.AS.TokenEndpoint, form, id, secret)
	}
}

// JWTBearerGrant is the JWT bearer grant (RFC 7523 section 2.1) with the
// assertion src returns: workload identity federation.
func JWTBearerGrant(src AssertionSource, c ClientAuth) Grant {
	return func(ctx context.Context, hc *http.Client, t Target) (*oauth2.Token, error) {
		a, err := src(ctx)
		if err != nil {
			return nil, fmt.Errorf("getting the assertion: %w", err)
		}
		return jwtBearer(ctx, hc, t, a, c)
	}
}

// CheckAudience reports an assertion that is not for the authorization
// server of t: a JWT whose aud (a string or a list) names neither its
// issuer nor its token endpoint (a trailing slash aside), as RFC 7523
// section 3 requires of the server, is not sent, so that a token meant for
// one audience is never shown to another. Its errors quote the audience,
// never the assertion.
func CheckAudience(assertion string, t Target) error {
	j, err := ParseJWT(assertion)
	if err != nil {
		return fmt.Errorf("the assertion is not a JWT: %w", err)
	}
	var auds []string
	switch a := j.Claims["aud"].(type) {
	case string:
		auds = []string{a}
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok {
				auds = append(auds, s)
			}
		}
	}
	trim := func(s string) string { return strings.TrimSuffix(s, "/") }
	for _, a := range auds {
		if a != "" && (trim(a) == trim(t.AS.Issuer) || trim(a) == trim(t.AS.TokenEndpoint)) {
			return nil
		}
	}
	return fmt.Errorf("the assertion's audience %q is not the authorization server %s: it was not sent", auds, t.AS.Issuer)
}

// checkIDJAG checks an ID-JAG the identity provider issued for t before it
// is presented: its aud must be t's issuer and its resource claim, when it
// has one, t's resource (RFC 8707), as asked for in the exchange.
func checkIDJAG(jag string, t Target) error {
	if err := CheckAudience(jag, t); err != nil {
		return fmt.Errorf("the ID-JAG: %w", err)
	}
	j, _ := ParseJWT(jag)
	switch r := j.Claims["resource"].(type) {
	case nil:
	case string:
		if r != t.Resource {
			return fmt.Errorf("the ID-JAG is for the resource %q, not %q: it was not sent", r, t.Resource)
		}
	default:
		if l, ok := r.([]any); !ok || !slices.Contains(l, any(t.Resource)) {
			return fmt.Errorf("the ID-JAG's resource %v does not name %q: it was not sent", r, t.Resource)
		}
	}
	return nil
}

func jwtBearer(ctx context.Context, hc *http.Client, t Target, assertion string, c ClientAuth) (*oauth2.Token, error) {
	if err := CheckAudience(assertion, t); err != nil {
		return nil, err
	}
	form := withTarget(url.Values{"grant_type": {GrantJWTBearer}, "assertion": {assertion}}, t)
	id, secret, err := c.apply(form, t)
	if err != nil {
		return nil, err
	}
	return PostToken(ctx, hc, t.AS.TokenEndpoint, form, id, secret)
}

// Enterprise is the enterprise-managed authorization flow: the user's ID
// token from the enterprise identity provider is exchanged there (RFC
// 8693) for an identity assertion JWT authorization grant (ID-JAG) for the
// MCP authorization server, which the client then presents in a JWT
// bearer grant (RFC 7523).
type Enterprise struct {
	IDToken AssertionSource
	// SubjectTokenType is the type of what IDToken returns: empty for an
	// ID token (TokenTypeIDToken); a gateway exchanging its principals'
	// access tokens sets TokenTypeAccessToken.
	SubjectTokenType string
	// IdPTokenURL is the identity provider's token endpoint; if empty it
	// is discovered from IdPIssuer.
	IdPTokenURL string
	IdPIssuer   string
	IdP         ClientAuth // the client at the identity provider
	Client      ClientAuth // the client at the MCP authorization server
}

// Grant returns the flow as a Grant.
func (e Enterprise) Grant() Grant {
	return func(ctx context.Context, hc *http.Client, t Target) (*oauth2.Token, error) {
		endpoint := e.IdPTokenURL
		if endpoint == "" {
			if e.IdPIssuer == "" {
				return nil, errors.New("no identity provider token endpoint or issuer")
			}
			meta, err := FetchServerMetadata(ctx, hc, e.IdPIssuer)
			if err != nil {
				return nil, fmt.Errorf("identity provider metadata: %w", err)
			}
			if meta == nil || meta.TokenEndpoint == "" {
				return nil, fmt.Errorf("identity provider %s publishes no token endpoint", e.IdPIssuer)
			}
			endpoint = meta.TokenEndpoint
		}
		idToken, err := e.IDToken(ctx)
		if err != nil {
			return nil, fmt.Errorf("getting the ID token: %w", err)
		}
		typ := e.SubjectTokenType
		if typ == "" {
			typ = TokenTypeIDToken
		}
		form := Exchange{SubjectToken: idToken, SubjectTokenType: typ, RequestedTokenType: TokenTypeIDJAG,
			Audience: t.AS.Issuer}.form(t)
		id, secret, err := e.IdP.apply(form, Target{AS: t.AS})
		if err != nil {
			return nil, err
		}
		jag, err := PostToken(ctx, hc, endpoint, form, id, secret)
		if err != nil {
			return nil, fmt.Errorf("token exchange at the identity provider: %w", err)
		}
		if it, _ := jag.Extra("issued_token_type").(string); it != "" && it != TokenTypeIDJAG {
			return nil, fmt.Errorf("the identity provider issued a %q, not an ID-JAG", it)
		}
		if err := checkIDJAG(jag.AccessToken, t); err != nil {
			return nil, err
		}
		tok, err := jwtBearer(ctx, hc, t, jag.AccessToken, e.Client)
		if err != nil {
			return nil, &AuthServerStepError{Err: err}
		}
		return tok, nil
	}
}

// AuthServerStepError is the Enterprise flow's JWT bearer grant failing
// at the MCP authorization server; the flow's other failures are the
// identity provider's, or of the ID-JAG it issued.
type AuthServerStepError struct{ Err error }

func (e *AuthServerStepError) Error() string {
	return "JWT bearer grant with the ID-JAG: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *AuthServerStepError) Unwrap() error { return e.Err }
