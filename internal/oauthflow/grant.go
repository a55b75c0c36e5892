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
	"slices"
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
// 401 it reads the protected resource metadata (RFC 9728) for the
// resource and the scopes, fetches the metadata of the authorization
// server the client is set up for (GrantConfig.Issuer, RFC 8414) and runs
// its Grant there; when the token expires the grant runs again. The
// authorization server a server names is never the one the grant's
// credentials go to: a server that names another is refused before
// anything is sent. A failed grant is reported, not retried with other
// grants. A 403 runs the grant again only when it asks for more scopes
// (insufficient_scope); the scopes asked for then are those granted
// before and those the server asks for.
type GrantHandler struct {
	grant  Grant
	issuer string
	hc     *http.Client
	log    *slog.Logger

	flow sync.Mutex // held for a whole grant run from Authorize

	mu     sync.Mutex
	target *Target
	tok    *oauth2.Token
}

// GrantConfig is what a GrantHandler needs besides its Grant.
type GrantConfig struct {
	// Issuer is the authorization server the grant runs at: its
	// credentials and assertions go there and nowhere else. Required.
	Issuer string
	// HTTPClient sends the requests to the authorization server and for
	// the protected resource metadata; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives the handler's logs; nil means none.
	Logger *slog.Logger
}

var _ auth.OAuthHandler = (*GrantHandler)(nil)

// NewGrantHandler returns a handler running g at cfg.Issuer.
func NewGrantHandler(g Grant, cfg GrantConfig) *GrantHandler {
	h := &GrantHandler{grant: g, issuer: cfg.Issuer, hc: cfg.HTTPClient, log: cfg.Logger}
	if h.hc == nil {
		h.hc = http.DefaultClient
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
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

// Authorize runs the grant after a 401, or a 403 asking for more scopes
// (insufficient_scope); any other 403 is the server's answer, and it
// returns nil without running anything.
func (h *GrantHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && !asksForScope(challenges) {
		return nil
	}
	h.flow.Lock()
	defer h.flow.Unlock()
	h.mu.Lock()
	prev, cur := h.target, h.tok
	h.mu.Unlock()
	if resp.StatusCode == http.StatusUnauthorized && cur != nil && cur.Valid() && sentToken(req) != cur.AccessToken {
		return nil // a newer token than the one refused: the request goes again with it
	}
	resource := req.URL.String()
	prm := findResourceMetadata(ctx, h.hc, h.log, challenges, resource)
	var scopes []string
	if prm != nil {
		if prm.Resource != "" {
			resource = prm.Resource
		}
		if err := CheckAuthServers(prm, h.issuer); err != nil {
			return &SignInError{Err: err}
		}
		scopes = prm.ScopesSupported
	}
	for _, c := range challenges {
		if s := c.Params["scope"]; s != "" {
			scopes = strings.Fields(s)
		}
	}
	if prev != nil {
		scopes = unionScopes(prev.Scopes, scopes)
	}
	as, err := FetchServerMetadata(ctx, h.hc, h.issuer)
	if err != nil {
		return &SignInError{Err: fmt.Errorf("authorization server metadata: %w", err)}
	}
	if as == nil {
		as = &oauthex.AuthServerMeta{Issuer: h.issuer, TokenEndpoint: strings.TrimRight(h.issuer, "/") + "/token"}
	}
	if as.TokenEndpoint == "" {
		return &SignInError{Err: fmt.Errorf("the authorization server %s publishes no token endpoint", h.issuer)}
	}
	t := Target{AS: as, Resource: resource, Scopes: scopes}
	tok, err := h.grant(ctx, h.hc, t)
	if err != nil {
		return &SignInError{Err: err}
	}
	h.mu.Lock()
	h.target, h.tok = &t, tok
	h.mu.Unlock()
	h.log.Debug("authorized", "issuer", as.Issuer, "token_type", tok.Type(), "scopes", strings.Join(scopes, " "))
	return nil
}

// CheckAuthServers reports protected resource metadata prm that names
// authorization servers, none of them issuer (a trailing slash aside): a
// server that names another than the one the credentials are set up for.
// The error names both; nil prm, or one naming none, is no error.
func CheckAuthServers(prm *oauthex.ProtectedResourceMetadata, issuer string) error {
	same := func(as string) bool { return strings.TrimSuffix(as, "/") == strings.TrimSuffix(issuer, "/") }
	if prm == nil || len(prm.AuthorizationServers) == 0 || slices.ContainsFunc(prm.AuthorizationServers, same) {
		return nil
	}
	return fmt.Errorf("the server names the authorization server %s, not %s, the issuer the client is set up for; no credentials were sent",
		strings.Join(prm.AuthorizationServers, ", "), issuer)
}

// ResourceMetadata returns the protected resource metadata (RFC 9728) of
// resource, fetched with hc at the endpoint's path under /.well-known or
// at the root; nil when none is found.
func ResourceMetadata(ctx context.Context, hc *http.Client, resource string) *oauthex.ProtectedResourceMetadata {
	return findResourceMetadata(ctx, hc, slog.New(slog.DiscardHandler), nil, resource)
}

// asksForScope reports whether the challenges of a 403 ask for more
// scopes (step-up).
func asksForScope(cs []oauthex.Challenge) bool {
	for _, c := range cs {
		if c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// sentToken returns the access token of a request's Authorization header,
// whatever its scheme.
func sentToken(req *http.Request) string {
	_, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return strings.TrimSpace(tok)
}

// unionScopes returns the scopes of a, then those of b not in a.
func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// findResourceMetadata finds the protected resource metadata of
// resource, fetched with hc: at the URL of the challenge, at the
// endpoint's path under /.well-known, at the root; nil when none is found.
func findResourceMetadata(ctx context.Context, hc *http.Client, log *slog.Logger, cs []oauthex.Challenge, resource string) *oauthex.ProtectedResourceMetadata {
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
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, u, resource, hc)
		if err == nil && prm != nil {
			return prm
		}
		if err != nil {
			log.Debug("no protected resource metadata", "url", u, "error", err)
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
