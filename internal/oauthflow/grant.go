package oauthflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Target is what a grant needs to know about where the token is for:
// the authorization server (from its metadata), the protected resource and
// the scopes to ask for.
type Target struct {
	AS       *oauthex.AuthServerMeta
	Resource string
	Scopes   []string
}

// A Grant gets an access token for t with no user present: the client
// credentials grant, a JWT bearer assertion, a token exchange. hc sends
// its requests.
type Grant func(ctx context.Context, hc *http.Client, t Target) (*oauth2.Token, error)

// GrantHandler is an auth.OAuthHandler for grants that need no user: on a
// 401 it discovers the authorization server (protected resource metadata,
// RFC 9728, then authorization server metadata, RFC 8414) and runs its
// Grant; when the token expires the grant runs again. A failed grant is
// reported, not retried with other grants.
type GrantHandler struct {
	grant Grant
	hc    *http.Client
	log   *slog.Logger

	mu     sync.Mutex
	target *Target
	tok    *oauth2.Token
}

var _ auth.OAuthHandler = (*GrantHandler)(nil)

// NewGrantHandler returns a handler running g, sending its requests (and
// discovery's) with hc.
func NewGrantHandler(g Grant, hc *http.Client, log *slog.Logger) *GrantHandler {
	if hc == nil {
		hc = http.DefaultClient
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &GrantHandler{grant: g, hc: hc, log: log}
}

// TokenSource returns nil before the first Authorize, then a source that
// runs the grant again when the token has expired.
func (h *GrantHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.target == nil {
		return nil, nil
	}
	return grantSource{h: h}, nil
}

type grantSource struct{ h *GrantHandler }

func (s grantSource) Token() (*oauth2.Token, error) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tok != nil && h.tok.Valid() {
		return h.tok, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tok, err := h.grant(ctx, h.hc, *h.target)
	if err != nil {
		return nil, err
	}
	h.tok = tok
	return tok, nil
}

// Authorize discovers the authorization server after a 401 (or a 403
// asking for scopes) and runs the grant.
func (h *GrantHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	resource := req.URL.String()
	prm := h.resourceMetadata(ctx, challenges, resource)
	if prm == nil || len(prm.AuthorizationServers) == 0 {
		return &SignInError{Err: errors.New("the server published no protected resource metadata naming an authorization server")}
	}
	if prm.Resource != "" {
		resource = prm.Resource
	}
	as, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], h.hc)
	if err != nil {
		return &SignInError{Err: fmt.Errorf("authorization server metadata: %w", err)}
	}
	if as == nil {
		as = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimRight(prm.AuthorizationServers[0], "/") + "/token"}
	}
	var scopes []string
	for _, c := range challenges {
		if s := c.Params["scope"]; s != "" {
			scopes = strings.Fields(s)
		}
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	t := Target{AS: as, Resource: resource, Scopes: scopes}
	tok, err := h.grant(ctx, h.hc, t)
	if err != nil {
		return &SignInError{Err: err}
	}
	h.mu.Lock()
	h.target, h.tok = &t, tok
	h.mu.Unlock()
	h.log.Debug("authorized", "issuer", as.Issuer, "token_type", tok.Type())
	return nil
}

// resourceMetadata finds the protected resource metadata: at the URL of
// the challenge, at the endpoint's path under /.well-known, at the root.
func (h *GrantHandler) resourceMetadata(ctx context.Context, cs []oauthex.Challenge, resource string) *oauthex.ProtectedResourceMetadata {
	var urls []string
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" {
			urls = append(urls, u)
		}
	}
	if u, err := url.Parse(resource); err == nil {
		p := *u
		p.RawQuery, p.Fragment = "", ""
		p.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
		urls = append(urls, p.String())
		p.Path = "/.well-known/oauth-protected-resource"
		urls = append(urls, p.String())
	}
	for _, u := range urls {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, u, resource, h.hc)
		if err == nil && prm != nil {
			return prm
		}
		if err != nil {
			h.log.Debug("no protected resource metadata", "url", u, "error", err)
		}
	}
	return nil
}

// TokenError is an authorization server's refusal of a token request.
type TokenError struct {
	Endpoint    string // the token endpoint
	Status      int
	Code        string // the OAuth error code, such as invalid_grant
	Description string
}

func (e *TokenError) Error() string {
	msg := fmt.Sprintf("token endpoint %s: HTTP %d", e.Endpoint, e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Description != "" {
		d := jwtLike.ReplaceAllString(e.Description, "[a JWT]") // a server may echo an assertion
		if len(d) > 200 {
			d = strings.ToValidUTF8(d[:200], "") + "..."
		}
		msg += fmt.Sprintf(" (%q)", d)
	}
	return msg
}

// jwtLike matches a compact JWS, such as an assertion a server repeats.
var jwtLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*`)

// PostToken sends a token request (form, optionally with HTTP Basic client
// authentication) and decodes the token response. Errors name the
// endpoint and the server's error code, never the form's values.
func PostToken(ctx context.Context, hc *http.Client, endpoint string, form url.Values, basicID, basicSecret string) (*oauth2.Token, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("token endpoint %q: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basicID != "" {
		req.SetBasicAuth(url.QueryEscape(basicID), url.QueryEscape(basicSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token endpoint %s: %w", endpoint, scrubURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("token endpoint %s: reading the response: %w", endpoint, err)
	}
	var tr struct {
		AccessToken string          `json:"access_token"`
		TokenType   string          `json:"token_type"`
		ExpiresIn   json.Number     `json:"expires_in"`
		Scope       string          `json:"scope"`
		IssuedType  string          `json:"issued_token_type"`
		Error       string          `json:"error"`
		Description string          `json:"error_description"`
		Refresh     json.RawMessage `json:"refresh_token"`
	}
	jerr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK || tr.Error != "" {
		return nil, &TokenError{Endpoint: endpoint, Status: resp.StatusCode, Code: tr.Error, Description: tr.Description}
	}
	if jerr != nil {
		return nil, fmt.Errorf("token endpoint %s: the response is not a JSON token response: %w", endpoint, jerr)
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("token endpoint %s: the response has no access_token", endpoint)
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType}
	if n, err := tr.ExpiresIn.Int64(); err == nil && n > 0 {
		tok.Expiry = time.Now().Add(time.Duration(n) * time.Second)
	}
	extra := map[string]any{}
	if tr.Scope != "" {
		extra["scope"] = tr.Scope
	}
	if tr.IssuedType != "" {
		extra["issued_token_type"] = tr.IssuedType
	}
	return tok.WithExtra(extra), nil
}

// scrubURLError drops the URL a *url.Error repeats (the caller names the
// endpoint already).
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
