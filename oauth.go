package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// OAuth is the MCP authorization flow as an Auth: protected-resource and
// authorization-server metadata discovery, client registration (a
// preregistered client, a client ID metadata document, or dynamic client
// registration), the authorization code grant with PKCE, token refresh and
// scope step-up. The protocol is go-sdk's auth package; OAuth adds what an
// application needs around it: a loopback redirect served by the client
// while the user signs in, a way to send the user to the authorization page,
// and a token store so a signed-in user stays signed in.
//
// The zero value works: it registers dynamically, serves the redirect on
// 127.0.0.1, logs the authorization URL (set OpenURL to do better), and
// keeps tokens in memory. An OAuth value may be shared by several clients;
// each keeps its own tokens under its server's URL. It applies to HTTP
// targets, streamable and SSE.
type OAuth struct {
	// ClientID and ClientSecret identify a client registered with the
	// authorization server in advance. Empty means dynamic client
	// registration (or ClientIDMetadataURL, when the server supports it).
	ClientID     string
	ClientSecret string
	// Issuer, with ClientID, is the authorization server the client is
	// registered with: the flow stops rather than send the client's
	// credentials to any other. Set it whenever ClientSecret is set.
	Issuer string
	// ClientIDMetadataURL is an https URL of a client ID metadata document,
	// used when the authorization server supports them.
	ClientIDMetadataURL string
	// ClientName is the client_name sent with dynamic registration; empty
	// means "mcpadapter".
	ClientName string
	// Scopes are requested in addition to those the server asks for.
	Scopes []string

	// RedirectURL is where the authorization server sends the user back. It
	// must be a loopback http URL (http://127.0.0.1:PORT/PATH or
	// http://localhost:PORT/PATH), which the client serves only while it
	// waits for the user. Empty means http://127.0.0.1 on a free port,
	// path /callback. For any other redirect, give go-sdk's handler to
	// ClientOptions.OAuthHandler instead.
	RedirectURL string
	// OpenURL sends the user to the authorization page: print it, open a
	// browser, send it to a chat. It must not wait for the user. Nil means
	// the URL is logged at warn level on ClientOptions.Logger.
	OpenURL func(ctx context.Context, authURL string) error
	// Timeout bounds the wait for the user to finish signing in; zero means
	// 5 minutes. This wait does not count against ConnectTimeout.
	Timeout time.Duration

	// Store keeps tokens between runs; nil means in memory, for the life of
	// the Client. See NewFileTokenStore.
	Store TokenStore
	// HTTPClient sends the requests to the authorization server (metadata,
	// registration, token); nil means ClientOptions.HTTPClient without the
	// client's Headers and Auth, or a plain client.
	HTTPClient *http.Client
}

// wrap leaves requests alone: OAuth tokens are set by go-sdk's streamable
// transport, from the handler the Client builds (see Client.oauth).
func (*OAuth) wrap(next http.RoundTripper) http.RoundTripper { return next }

// check reports settings that cannot work, before anything is sent.
func (o *OAuth) check() error {
	if (o.ClientSecret != "" || o.Issuer != "") && o.ClientID == "" {
		return errors.New("OAuth.ClientSecret and OAuth.Issuer need OAuth.ClientID")
	}
	if o.RedirectURL != "" {
		if _, _, err := redirectTarget(o.RedirectURL); err != nil {
			return err
		}
	}
	if o.Timeout < 0 {
		return fmt.Errorf("OAuth.Timeout %v is negative", o.Timeout)
	}
	return nil
}

func (o *OAuth) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 5 * time.Minute
}

// AuthorizationError is a failure of the OAuth flow: discovery,
// registration, the user's consent, or the token exchange.
type AuthorizationError struct {
	Server string // the server's name
	Err    error
}

func (e *AuthorizationError) Error() string {
	return fmt.Sprintf("authorizing with %s: %s", e.Server, wire.RedactURLSecrets(e.Err.Error()))
}

func (e *AuthorizationError) Unwrap() error { return e.Err }

// oauthHandler is the auth.OAuthHandler a Client gives go-sdk. It holds
// the Client's token for the life of the Client, so tokens and granted
// scopes survive reconnects. Each sign-in is one run of go-sdk's
// authorization code handler, built for that run around a redirect
// listener opened for it (no port is held, or reserved, between sign-ins)
// and seeded with the current token. Sign-ins are one at a time: requests
// that fail together wait for the first one's sign-in and use its token.
type oauthHandler struct {
	o        *OAuth
	server   string // the server's name, for errors and logs
	resource string // the MCP endpoint URL: the token store key
	hc       *http.Client
	log      *slog.Logger
	store    TokenStore

	flow sync.Mutex // held for a whole sign-in

	mu     sync.Mutex
	loaded bool               // the store has been read
	ts     oauth2.TokenSource // nil before the first sign-in
	scopes []string           // granted so far, asked for again at step-up
	gen    uint64             // the token source whose tokens are saved
}

var _ auth.OAuthHandler = (*oauthHandler)(nil)

func newOAuthHandler(o *OAuth, server, resource string, hc *http.Client, log *slog.Logger) *oauthHandler {
	if o.HTTPClient != nil {
		hc = o.HTTPClient
	}
	store := o.Store
	if store == nil {
		store = NewMemoryTokenStore()
	}
	return &oauthHandler{o: o, server: server, resource: resource, hc: hc, log: log, store: store}
}

// TokenSource returns the token source for outgoing requests, or nil
// before the first sign-in. The first call reads the token store.
func (h *oauthHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded {
		h.loaded = true
		h.loadLocked(ctx)
	}
	if h.ts == nil {
		return nil, nil
	}
	return h.ts, nil
}

// loadLocked takes a token from the store, if it has one for the server.
func (h *oauthHandler) loadLocked(ctx context.Context) {
	st, err := h.store.Load(ctx, h.resource)
	if err != nil {
		// A broken store must not stop the user from signing in again.
		h.log.Warn("could not read the OAuth token store; signing in again", "err", err)
		return
	}
	if st == nil || st.Token == nil || st.TokenURL == "" {
		return
	}
	oc := st.config()
	refreshCtx := context.WithValue(context.Background(), oauth2.HTTPClient, h.hc)
	h.gen++
	h.ts = h.saving(oc, oc.TokenSource(refreshCtx, st.token()), st.Token.AccessToken, h.gen)
	h.scopes = st.Scopes
}

// Authorize signs in after a 401, or a 403 asking for more scopes.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(resp) {
		// A plain 403 is the server's answer, not a request to sign in
		// (the transport sends the request once more, then reports it).
		return nil
	}
	// One connect asks the user once: when the protocol probe's sign-in
	// failed, the initialize handshake that follows must not ask again.
	st, _ := ctx.Value(dialKey{}).(*dialState)
	if st != nil {
		if prev, _ := st.authErr.Load().(error); prev != nil {
			return prev
		}
		// The time a user spends signing in counts against neither the
		// connect timeout nor the protocol probe's.
		defer st.pause()()
	}
	h.flow.Lock()
	defer h.flow.Unlock()
	ts, err := h.TokenSource(ctx)
	if err != nil {
		return err
	}
	if ts != nil {
		// Signed in or refreshed since this request was sent? Then send
		// it again with the new token before asking the user anything. (A
		// refresh token that no longer works fails here, and the user
		// signs in again.)
		sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
		if tok, err := ts.Token(); err == nil && tok.AccessToken != "" && tok.AccessToken != sent {
			return nil
		}
	}
	h.log.Info("the server asks for authorization", "status", resp.StatusCode)
	if err := h.signIn(ctx, req, resp); err != nil {
		aerr := &AuthorizationError{Server: h.server, Err: err}
		if st != nil {
			st.authErr.Store(error(aerr))
		}
		return aerr
	}
	return nil
}

// insufficientScope reports whether a 403 asks for more scopes (step-up).
func insufficientScope(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// signIn runs go-sdk's authorization code flow once.
func (h *oauthHandler) signIn(ctx context.Context, req *http.Request, resp *http.Response) error {
	f, err := listenRedirect(ctx, h.o.RedirectURL, h.o.timeout())
	if err != nil {
		return err
	}
	defer f.close()
	f.open, f.timeout = h.open, h.o.timeout()
	cfg := h.flowConfig(f)
	h.mu.Lock()
	cfg.InitialTokenSource = h.ts
	h.mu.Unlock()
	inner, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return fmt.Errorf("OAuth configuration: %w", err)
	}
	if err := inner.Authorize(ctx, req, resp); err != nil {
		return err
	}
	ts, err := inner.TokenSource(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// flowConfig is the configuration of one sign-in through f.
func (h *oauthHandler) flowConfig(f *loopbackFetcher) *auth.AuthorizationCodeHandlerConfig {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              f.redirectURL,
		AuthorizationCodeFetcher: f.fetch,
		RequestRefreshToken:      true,
		Client:                   h.hc,
		ScopeFilter:              h.chooseScopes,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			// From now on only this sign-in's tokens are saved: a refresh
			// by the source it replaces must not overwrite them.
			h.mu.Lock()
			h.gen++
			gen := h.gen
			h.mu.Unlock()
			h.save(oc, tok, gen)
			return h.saving(oc, oc.TokenSource(ctx, tok), tok.AccessToken, gen), nil
		},
	}
	if h.o.ClientID != "" {
		cred := &oauthex.ClientCredentials{ClientID: h.o.ClientID, Issuer: h.o.Issuer}
		if h.o.ClientSecret != "" {
			cred.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.o.ClientSecret}
		}
		cfg.PreregisteredClient = cred
	} else {
		name := h.o.ClientName
		if name == "" {
			name = "mcpadapter"
		}
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{f.redirectURL},
				ClientName:    name,
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		}
	}
	if h.o.ClientIDMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.o.ClientIDMetadataURL}
	}
	return cfg
}

// chooseScopes chooses the scopes to ask for: those the server names,
// those granted before (so a step-up does not lose them), and
// OAuth.Scopes.
func (h *oauthHandler) chooseScopes(discovered []string) []string {
	h.mu.Lock()
	granted := slices.Clone(h.scopes)
	h.mu.Unlock()
	out := slices.Clone(discovered)
	for _, s := range append(granted, h.o.Scopes...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// open sends the user to the authorization page.
func (h *oauthHandler) open(ctx context.Context, authURL string) error {
	if h.o.OpenURL != nil {
		return h.o.OpenURL(ctx, authURL)
	}
	h.log.Warn("authorization needed: open this URL in a browser to sign in", "url", authURL)
	return nil
}

// saving wraps ts so that every new token is written to the store; last
// is the token already saved.
func (h *oauthHandler) saving(oc *oauth2.Config, ts oauth2.TokenSource, last string, gen uint64) *savingTokenSource {
	return &savingTokenSource{src: ts, last: last, save: func(tok *oauth2.Token) { h.save(oc, tok, gen) }}
}

func (h *oauthHandler) save(oc *oauth2.Config, tok *oauth2.Token, gen uint64) {
	st := storedFrom(oc, tok)
	h.mu.Lock()
	if gen != h.gen {
		h.mu.Unlock()
		return // a token from a source a later sign-in replaced
	}
	h.scopes = st.Scopes
	h.mu.Unlock()
	// Saves run on the request path (a refresh happens as a request is
	// sent): a store that is slow or locked by another process gets 2s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.store.Save(ctx, h.resource, st); err != nil {
		h.log.Warn("could not save the OAuth token", "err", err)
	}
}

// savingTokenSource passes tokens through and saves each new one.
type savingTokenSource struct {
	src  oauth2.TokenSource
	save func(*oauth2.Token)

	mu   sync.Mutex
	last string // the access token saved last
}

func (s *savingTokenSource) Token() (*oauth2.Token, error) {
	tok, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := tok.AccessToken != s.last
	s.last = tok.AccessToken
	s.mu.Unlock()
	if changed {
		s.save(tok)
	}
	return tok, nil
}

// oauthTransport authorizes the requests of go-sdk's SSE client, which has
// no OAuth of its own, the way its streamable client does: the handler's
// token on every request, and after a 401 or 403 one Authorize and one
// retry.
type oauthTransport struct {
	h    auth.OAuthHandler
	next http.RoundTripper
}

func (t *oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
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
func (t *oauthTransport) send(req *http.Request) (*http.Request, *http.Response, error) {
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
