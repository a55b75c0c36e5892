package oauthflow

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// SignInError is a failed sign-in: discovery, registration, the user's
// consent, or the token exchange. Err says why.
type SignInError struct {
	Err error
}

// Error describes the failure.
func (e *SignInError) Error() string { return "signing in: " + e.Err.Error() }

// Unwrap returns Err.
func (e *SignInError) Unwrap() error { return e.Err }

// Handler is the auth.OAuthHandler of one client of one MCP server. It
// holds the client's token for its whole life, so tokens and granted
// scopes survive reconnects. Each sign-in is one run of go-sdk's
// authorization code handler, built for that run around a redirect
// listener opened for it (no port is held, or reserved, between sign-ins)
// and seeded with the current token. Sign-ins are one at a time: requests
// that fail together wait for the first one's sign-in and use its token.
type Handler struct {
	cfg   Config
	hc    *http.Client
	log   *slog.Logger
	store Store
	bg    *background // saves its token sources retry on their own

	flow sync.Mutex // held for a whole sign-in

	mu     sync.Mutex
	loaded bool               // the store has been read
	ts     oauth2.TokenSource // nil before the first sign-in
	scopes []string           // granted so far, asked for again at step-up
	gen    uint64             // the token source whose tokens are saved
}

var _ auth.OAuthHandler = (*Handler)(nil)

// NewHandler returns a Handler for cfg. It sends nothing until asked.
func NewHandler(cfg Config) *Handler {
	h := &Handler{cfg: cfg, hc: cfg.HTTPClient, log: cfg.Logger, store: cfg.Store, bg: newBackground()}
	if h.hc == nil {
		h.hc = http.DefaultClient
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.store == nil {
		h.store = NewMemoryStore()
	}
	return h
}

// Close ends the saves of tokens kept in memory that the handler retries
// on its own (a token the shared store could not take), each after one
// last try bounded by a few seconds, and waits for them. The Handler
// stays usable.
func (h *Handler) Close() { h.bg.close() }

// TokenSource returns the token source for outgoing requests, or nil
// before the first sign-in. The first call reads the token store.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
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
func (h *Handler) loadLocked(ctx context.Context) {
	st, err := h.store.Load(ctx, h.cfg.Resource)
	if err != nil {
		// A broken store must not stop the user from signing in again.
		h.log.Warn("could not read the OAuth token store; signing in again", "err", err)
		return
	}
	if st == nil || st.Token == nil || st.TokenURL == "" {
		return
	}
	tok := st.usable(h.cfg.DPoP)
	if tok == nil {
		h.log.Warn("the stored OAuth token is bound to another DPoP key; signing in again")
		return
	}
	oc := st.config()
	h.gen++
	h.ts = h.source(context.Background(), oc, tok, h.gen, false)
	h.scopes = st.Scopes
}

// Authorize signs in after a 401, or a 403 asking for more scopes. A
// failed sign-in is a *SignInError. When ctx carries an Attempt (see
// WithAttempt), the attempt's clocks stop while the user signs in, and a
// sign-in that failed in it is not tried again.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(resp) {
		// A plain 403 is the server's answer, not a request to sign in
		// (the transport sends the request once more, then reports it).
		return nil
	}
	// One connect asks the user once: when the protocol probe's sign-in
	// failed, the initialize handshake that follows must not ask again.
	a := attemptFrom(ctx)
	if a != nil {
		if prev := a.FailedSignIn(); prev != nil {
			return prev
		}
		// The time a user spends signing in counts against neither the
		// connect timeout nor the protocol probe's.
		defer a.Pause()()
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
		serr := &SignInError{Err: err}
		if a != nil {
			a.SetFailedSignIn(serr)
		}
		return serr
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
func (h *Handler) signIn(ctx context.Context, req *http.Request, resp *http.Response) error {
	f, err := listenRedirect(ctx, h.cfg.RedirectURL, h.cfg.timeout())
	if err != nil {
		return err
	}
	defer f.close()
	f.open, f.timeout = h.open, h.cfg.timeout()
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
func (h *Handler) flowConfig(f *loopbackFetcher) *auth.AuthorizationCodeHandlerConfig {
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
			saved := h.save(oc, tok, gen)
			return h.source(ctx, oc, tok, gen, !saved), nil
		},
	}
	if h.cfg.ClientID != "" {
		cred := &oauthex.ClientCredentials{ClientID: h.cfg.ClientID, Issuer: h.cfg.Issuer}
		if h.cfg.ClientSecret != "" {
			cred.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
		cfg.PreregisteredClient = cred
	} else {
		name := h.cfg.ClientName
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
	if h.cfg.ClientIDMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientIDMetadataURL}
	}
	return cfg
}

// chooseScopes chooses the scopes to ask for: those the server names,
// those granted before (so a step-up does not lose them), and
// Config.Scopes.
func (h *Handler) chooseScopes(discovered []string) []string {
	h.mu.Lock()
	granted := slices.Clone(h.scopes)
	h.mu.Unlock()
	out := slices.Clone(discovered)
	for _, s := range append(granted, h.cfg.Scopes...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// open sends the user to the authorization page.
func (h *Handler) open(ctx context.Context, authURL string) error {
	if h.cfg.OpenURL != nil {
		return h.cfg.OpenURL(ctx, authURL)
	}
	h.log.Warn("authorization needed: open this URL in a browser to sign in", "url", authURL)
	return nil
}

// source returns the token source that refreshes tok. With a store
// shared by processes (an Updater), refreshes go through the store's lock
// and the store saves them (and tok, when unsaved says its save failed);
// otherwise each new token is saved (see saving). ctx carries the HTTP
// client for refreshes, if it has one.
func (h *Handler) source(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token, gen uint64, unsaved bool) oauth2.TokenSource {
	if u, ok := h.store.(Updater); ok {
		return newSharedRefresher(u, h.cfg.Resource, oc, h.hc, h.cfg.DPoP, h.log, h.bg, tok, unsaved)
	}
	if _, ok := ctx.Value(oauth2.HTTPClient).(*http.Client); !ok {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, h.hc)
	}
	return h.saving(oc, oc.TokenSource(ctx, tok), tok.AccessToken, gen)
}

// saving wraps ts so that every new token is written to the store; last
// is the token already saved.
func (h *Handler) saving(oc *oauth2.Config, ts oauth2.TokenSource, last string, gen uint64) *savingTokenSource {
	return &savingTokenSource{src: ts, last: last, save: func(tok *oauth2.Token) { h.save(oc, tok, gen) }}
}

// save writes tok to the store, unless a later sign-in has replaced the
// token source gen, and reports whether the store took it.
func (h *Handler) save(oc *oauth2.Config, tok *oauth2.Token, gen uint64) bool {
	st := storedFrom(oc, tok, h.cfg.DPoP)
	h.mu.Lock()
	if gen != h.gen {
		h.mu.Unlock()
		return true // a token from a source a later sign-in replaced
	}
	h.scopes = st.Scopes
	h.mu.Unlock()
	// Saves run on the request path (a refresh happens as a request is
	// sent): a store that is slow or locked by another process gets 2s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.store.Save(ctx, h.cfg.Resource, st); err != nil {
		h.log.Warn("could not save the OAuth token", "err", err)
		return false
	}
	return true
}
