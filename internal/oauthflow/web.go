package oauthflow

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/sealed"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The sign-in of the users of a web service (Web): each principal (the
// user a request is made for) has a token of its own, kept in the store
// under TokenKey(resource, principal). A request of a principal with no
// token fails at once with an authorization URL for that principal
// (NeedSignIn); the service sends its user there, the authorization server
// sends the browser back to the service's own redirect URL, and the
// service hands the callback to Web.Complete with the principal it has
// authenticated. Between the two, nothing is kept in memory: the
// authorization request's state is sealed (AES-GCM with WebConfig.StateKey,
// which every replica shares) and carries the principal, the resource,
// the PKCE verifier and an expiry, so the callback completes on any
// replica.

// DefaultStateTTL is how long a sign-in may take when WebConfig.StateTTL
// is zero.
const DefaultStateTTL = 10 * time.Minute

// DefaultMaxPrincipals bounds the token sources a Web keeps in memory when
// WebConfig.MaxPrincipals is zero.
const DefaultMaxPrincipals = 4096

// maxStateLen bounds the state a callback may carry.
const maxStateLen = 4096

// WebConfig is what a Web needs.
type WebConfig struct {
	// ClientID and ClientSecret identify the client registered with
	// Issuer, the only authorization server they, and the codes, are sent
	// to. ClientSecret is empty for a public client.
	ClientID, ClientSecret string
	Issuer                 string
	// Scopes are asked for in addition to those the server names.
	Scopes []string
	// RedirectURL is the service's callback URL.
	RedirectURL string
	// StateKey seals the state of each sign-in (16, 24 or 32 bytes).
	StateKey []byte
	// StateTTL bounds a sign-in; zero means DefaultStateTTL.
	StateTTL time.Duration
	// Store keeps the tokens; nil means in memory.
	Store Store
	// HTTPClient sends the requests to the authorization server and for
	// metadata; nil means http.DefaultClient. Private addresses a server
	// names are refused (PublicOnly) unless it dials on its own.
	HTTPClient *http.Client
	// Logger receives the flow's logs; nil means none.
	Logger *slog.Logger
	// Principal returns the principal of a request's context.
	Principal func(ctx context.Context) string
	// MaxPrincipals bounds the token sources kept in memory; zero means
	// DefaultMaxPrincipals.
	MaxPrincipals int
	// DPoPKey, if set, binds the tokens to this key (RFC 9449): a proof
	// with each token request and, for a token issued bound, with each
	// request to the server. Replicas sharing a store need the same key.
	DPoPKey crypto.Signer
	// Unattended, if set, gives the bearer token of the requests made for
	// no principal (""), which then need no sign-in: a service's own
	// requests, such as a gateway's listings.
	Unattended func(ctx context.Context) (string, error)
}

// CheckWeb reports settings of WebSignInOptions that cannot work. what
// names the public type in errors.
func CheckWeb(what string, c WebConfig) error {
	if c.ClientID == "" {
		return fmt.Errorf("%s.ClientID is empty: register the service's client with the authorization server and give its ID", what)
	}
	if err := CheckGrantIssuer(what, c.Issuer); err != nil {
		return err
	}
	u, err := url.Parse(c.RedirectURL)
	switch {
	case c.RedirectURL == "":
		return fmt.Errorf("%s.RedirectURL is empty: give the URL of the service's callback (https)", what)
	case err != nil || u.Host == "" || u.Fragment != "":
		return fmt.Errorf("%s.RedirectURL %q: want an absolute https URL without a fragment", what, c.RedirectURL)
	case u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname())):
		return fmt.Errorf("%s.RedirectURL %q: want https (http only on a loopback host)", what, c.RedirectURL)
	}
	if len(c.StateKey) == 0 {
		return fmt.Errorf("%s.StateKey is empty: give a random 32-byte key, the same on every replica (a sign-in started on one completes on another)", what)
	}
	if _, err := sealed.New(c.StateKey, false); err != nil {
		return fmt.Errorf("%s.StateKey: %w", what, err)
	}
	if c.StateTTL < 0 {
		return fmt.Errorf("%s.StateTTL %v is negative", what, c.StateTTL)
	}
	return CheckDPoPKey(what, c.DPoPKey)
}

// TokenKey is the key of principal's token for resource in a Store:
// resource itself for the principal "" (the key of the loopback sign-in),
// else resource, a line feed, "principal=" and the principal
// query-escaped. A resource URL holds no control character (url.Parse
// refuses them), so the line feed ends it and no two (resource, principal)
// pairs share a key.
func TokenKey(resource, principal string) string {
	if principal == "" {
		return resource
	}
	return resource + "\nprincipal=" + url.QueryEscape(principal)
}

// signInsKey is the key of the record of the states already used to sign
// principal in to resource (see Web.consume): not a token key, since
// TokenKey puts "principal=" after the line feed.
func signInsKey(resource, principal string) string {
	return resource + "\nsign-ins=" + url.QueryEscape(principal)
}

// Web signs in many principals to MCP servers through a web service's
// redirect, and holds their tokens. It is safe for concurrent use.
type Web struct {
	cfg WebConfig
	box *sealed.Box
	// stateAD is what the states are sealed under (stateBinding).
	stateAD string
	hc      *http.Client
	log     *slog.Logger
	store   Store
	bg      *background
	dpop    *DPoP // nil: bearer tokens

	mu      sync.Mutex
	sources map[string]*webSource // by token key
	used    map[string]time.Time  // states used here: nonce -> expiry
	meta    *oauthex.AuthServerMeta
	metaAt  time.Time
}

// webSource is the token source of one principal for one resource.
type webSource struct {
	ts     oauth2.TokenSource
	access string // the access token read from the store
	scopes []string
}

// NewWeb returns a Web for cfg, checked by CheckWeb.
func NewWeb(cfg WebConfig) (*Web, error) {
	box, err := sealed.New(cfg.StateKey, false)
	if err != nil {
		return nil, err
	}
	if cfg.StateTTL == 0 {
		cfg.StateTTL = DefaultStateTTL
	}
	if cfg.MaxPrincipals <= 0 {
		cfg.MaxPrincipals = DefaultMaxPrincipals
	}
	if cfg.Principal == nil {
		cfg.Principal = func(context.Context) string { return "" }
	}
	w := &Web{cfg: cfg, box: box, stateAD: stateBinding(cfg), hc: cfg.HTTPClient, log: cfg.Logger, store: cfg.Store, bg: newBackground(),
		sources: make(map[string]*webSource), used: make(map[string]time.Time)}
	if w.hc == nil {
		w.hc = http.DefaultClient
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.store == nil {
		w.store = NewMemoryStore()
	}
	if cfg.DPoPKey != nil {
		if w.dpop, err = NewDPoP(cfg.DPoPKey); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Close ends the background saves of refreshed tokens the shared store
// could not take, after one last try each. The Web stays usable.
func (w *Web) Close() { w.bg.close() }

// authClient returns the client for the authorization server of a sign-in
// to resource: the MCP server's and the issuer's hosts may be private.
// With a DPoP key, its token requests carry proofs of the Web's one key.
func (w *Web) authClient(resource string) *http.Client {
	_, hc := AuthServerClient(w.hc, nil, HostOf(resource), HostOf(w.cfg.Issuer))
	if w.dpop == nil {
		return hc
	}
	out := *hc
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = w.dpop.TokenTransport(base)
	return &out
}

// serverMeta returns the issuer's metadata, fetched at most every ten
// minutes; without metadata, the endpoints at the issuer's /authorize and
// /token.
func (w *Web) serverMeta(ctx context.Context, hc *http.Client) (*oauthex.AuthServerMeta, error) {
	w.mu.Lock()
	m, at := w.meta, w.metaAt
	w.mu.Unlock()
	if m != nil && time.Since(at) < 10*time.Minute {
		return m, nil
	}
	m, err := FetchServerMetadata(ctx, hc, w.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if m == nil {
		base := strings.TrimRight(w.cfg.Issuer, "/")
		m = &oauthex.AuthServerMeta{Issuer: w.cfg.Issuer, AuthorizationEndpoint: base + "/authorize", TokenEndpoint: base + "/token"}
	}
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
		return nil, fmt.Errorf("the authorization server %s publishes no authorization or token endpoint", w.cfg.Issuer)
	}
	w.mu.Lock()
	w.meta, w.metaAt = m, time.Now()
	w.mu.Unlock()
	return m, nil
}

// NeedSignIn is the failure of a request whose principal has no token the
// server takes: URL is the authorization URL to send that user to.
type NeedSignIn struct {
	Principal string
	URL       string
}

// Error says who must sign in, without the URL (a sign-in link for that
// user only, kept out of logs).
func (e *NeedSignIn) Error() string {
	return fmt.Sprintf("principal %q must sign in to the server (send them to the authorization URL)", e.Principal)
}

// WebTarget is a Web as one client uses it: for one MCP server.
type WebTarget struct {
	// Required makes the error of a request whose principal must sign in.
	Required func(*NeedSignIn) error
	// Refused makes the error of a sign-in that cannot start (a server
	// that names another authorization server, metadata that cannot be
	// read).
	Refused func(error) error

	w        *Web
	resource string
	hc       *http.Client
}

// Target returns the Web of the MCP server whose endpoint is resource.
func (w *Web) Target(resource string) *WebTarget {
	return &WebTarget{w: w, resource: resource, hc: w.authClient(resource),
		Required: func(n *NeedSignIn) error { return n }, Refused: func(err error) error { return err }}
}

// DPoP returns the DPoP state of the tokens (nil for bearer tokens): the
// requests to the server go through its ResourceTransport, below
// Transport.
func (t *WebTarget) DPoP() *DPoP { return t.w.dpop }

// Transport returns a RoundTripper that sends each request through next
// with the token of its principal, and turns a 401 (or a 403 asking for
// more scopes) into the error of Required, with an authorization URL for
// that principal.
func (t *WebTarget) Transport(next http.RoundTripper) http.RoundTripper {
	return &webTransport{t: t, next: next}
}

type webTransport struct {
	t    *WebTarget
	next http.RoundTripper
}

// RoundTrip sends req with its principal's token.
func (rt *webTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t, w := rt.t, rt.t.w
	ctx := req.Context()
	principal := w.cfg.Principal(ctx)
	if principal == "" && w.cfg.Unattended != nil {
		tok, err := w.cfg.Unattended(ctx)
		if err != nil {
			closeReqBody(req)
			return nil, t.Refused(fmt.Errorf("the token of the requests made for no principal: %w", err))
		}
		out := req.Clone(ctx)
		out.Header.Set("Authorization", "Bearer "+tok)
		return rt.next.RoundTrip(out)
	}
	key := TokenKey(t.resource, principal)
	src, err := w.source(ctx, key, t.hc)
	if err != nil {
		closeReqBody(req)
		return nil, t.Refused(err)
	}
	resp, sent, err := rt.send(req, key, src)
	if err != nil {
		return nil, err
	}
	if !asksSignIn(resp) {
		return resp, nil
	}
	var prev []string
	if src != nil {
		w.forget(key, src)
		prev = src.scopes
		// Signed in again (on another replica, say) since this process
		// read its token? Then send the request once more with the new
		// one before asking the user anything.
		if fresh, err := w.source(ctx, key, t.hc); err == nil && fresh != nil && fresh.access != sent && replayable(req) {
			discard(resp)
			retry := req.Clone(ctx)
			if req.GetBody != nil {
				if retry.Body, err = req.GetBody(); err != nil {
					return nil, err
				}
			}
			if resp, _, err = rt.send(retry, key, fresh); err != nil {
				return nil, err
			}
			if !asksSignIn(resp) {
				return resp, nil
			}
			prev = unionScopes(prev, fresh.scopes)
		}
		w.forget(key, nil)
	}
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	discard(resp)
	u, err := t.authURL(ctx, principal, challenges, prev)
	if err != nil {
		return nil, t.Refused(err)
	}
	return nil, t.Required(&NeedSignIn{Principal: principal, URL: u})
}

// send sends req through next with src's token (none when src is nil, or
// when its refresh token no longer works), and returns the access token
// sent.
func (rt *webTransport) send(req *http.Request, key string, src *webSource) (*http.Response, string, error) {
	out, sent := req, ""
	if src != nil {
		tok, err := src.ts.Token()
		var re *oauth2.RetrieveError
		switch {
		case err == nil:
			if d := rt.t.w.dpop; d != nil && strings.EqualFold(tok.Type(), "DPoP") {
				// Recorded again at each use: the DPoP forgets the
				// tokens recorded longest ago, and a source lives on.
				d.MarkBound(tok.AccessToken)
			}
			out = req.Clone(req.Context())
			out.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			sent = tok.AccessToken
		case errors.As(err, &re) && re.ErrorCode == "invalid_grant", errors.Is(err, errBoundElsewhere):
			// The refresh token is no good, or not this key's: the
			// principal signs in again.
			rt.t.w.forget(key, src)
		default:
			closeReqBody(req)
			return nil, "", rt.t.Refused(fmt.Errorf("refreshing the OAuth token: %w", scrubRetrieve(err)))
		}
	}
	resp, err := rt.next.RoundTrip(out)
	return resp, sent, err
}

// asksSignIn reports whether resp asks for a token (401) or for more
// scopes (403 insufficient_scope).
func asksSignIn(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized || (resp.StatusCode == http.StatusForbidden && insufficientScope(resp))
}

// replayable reports whether req can be sent again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// discard reads a little of resp's body and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// closeReqBody closes a request's body, as a RoundTripper must.
func closeReqBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// scrubRetrieve reports an oauth2.RetrieveError by its status and error
// code only (its text repeats the response body).
func scrubRetrieve(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return &TokenError{Endpoint: tokenEndpointOf(re), Status: status, Code: re.ErrorCode}
	}
	return err
}

func tokenEndpointOf(re *oauth2.RetrieveError) string {
	if re.Response != nil && re.Response.Request != nil && re.Response.Request.URL != nil {
		u := *re.Response.Request.URL
		u.RawQuery, u.User = "", nil
		return u.String()
	}
	return "(the token endpoint)"
}

// authURL makes the authorization URL of a sign-in of principal: the
// scopes the challenges (or the protected resource metadata) name, those
// granted before (prev) and WebConfig.Scopes; the state sealed. A server
// whose metadata names an authorization server other than the issuer gets
// nothing, nor does a sign-in whose state would be longer than Complete
// takes (maxStateLen).
func (t *WebTarget) authURL(ctx context.Context, principal string, cs []oauthex.Challenge, prev []string) (string, error) {
	w := t.w
	audience := t.resource
	var scopes []string
	if prm := findResourceMetadata(ctx, t.hc, w.log, cs, t.resource); prm != nil {
		if len(prm.AuthorizationServers) > 0 && !slices.ContainsFunc(prm.AuthorizationServers, w.isIssuer) {
			return "", fmt.Errorf("the server names the authorization server %s, not %s, the issuer the sign-in is set up for; no sign-in was started",
				clean(strings.Join(prm.AuthorizationServers, ", "), 300), w.cfg.Issuer)
		}
		if prm.Resource != "" {
			audience = prm.Resource
		}
		scopes = prm.ScopesSupported
	}
	for _, c := range cs {
		if s := c.Params["scope"]; s != "" && strings.EqualFold(c.Scheme, "bearer") {
			scopes = strings.Fields(s)
		}
	}
	scopes = unionScopes(unionScopes(prev, scopes), w.cfg.Scopes)
	as, err := w.serverMeta(ctx, t.hc)
	if err != nil {
		return "", err
	}
	if slices.Contains(as.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	verifier := oauth2.GenerateVerifier()
	state := w.sealState(&webState{
		Principal: principal, Resource: t.resource, Audience: audience, Verifier: verifier,
		Nonce: rand.Text(), Expires: time.Now().Add(w.cfg.StateTTL).UnixMilli(), Scopes: scopes,
	})
	if len(state) > maxStateLen {
		// Complete would refuse it: the user would sign in for nothing.
		return "", fmt.Errorf("the sign-in's state would be too long (%d bytes, at most %d: a principal of %d bytes, %d scopes); no sign-in was started",
			len(state), maxStateLen, len(principal), len(scopes))
	}
	oc := &oauth2.Config{ClientID: w.cfg.ClientID, Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint},
		RedirectURL: w.cfg.RedirectURL, Scopes: scopes}
	return oc.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", audience)), nil
}

// isIssuer reports whether an authorization server a server names is the
// configured issuer (a trailing slash aside).
func (w *Web) isIssuer(as string) bool {
	return strings.TrimSuffix(as, "/") == strings.TrimSuffix(w.cfg.Issuer, "/")
}

// source returns the token source of key, from memory or the store; nil
// when the store has no token for key.
func (w *Web) source(ctx context.Context, key string, hc *http.Client) (*webSource, error) {
	w.mu.Lock()
	s := w.sources[key]
	w.mu.Unlock()
	if s != nil {
		return s, nil
	}
	st, err := w.store.Load(ctx, key)
	if errors.Is(err, sealed.ErrUnreadable) {
		// Sealed with another key (the store's key was changed): no
		// token; the principal signs in again, and its new token
		// replaces this one.
		w.log.Warn("a stored OAuth token cannot be opened with the store's key; its principal signs in again", "err", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the OAuth token store: %w", err)
	}
	if st == nil || st.Token == nil || st.TokenURL == "" {
		return nil, nil
	}
	tok := st.usable(w.dpop)
	if tok == nil {
		return nil, nil // bound to another key: the principal signs in again
	}
	oc := st.config()
	s = &webSource{access: tok.AccessToken, scopes: st.Scopes}
	if u, ok := w.store.(Updater); ok {
		s.ts = newSharedRefresher(u, key, oc, hc, w.dpop, w.log, w.bg, tok, false)
	} else {
		rctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
		s.ts = &savingTokenSource{src: oc.TokenSource(rctx, tok), last: tok.AccessToken, save: func(t *oauth2.Token) {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := w.store.Save(sctx, key, storedFrom(oc, t, w.dpop)); err != nil {
				w.log.Warn("could not save the refreshed OAuth token", "err", err)
			}
		}}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur := w.sources[key]; cur != nil {
		return cur, nil
	}
	if len(w.sources) >= w.cfg.MaxPrincipals {
		for k := range w.sources { // any one: it is read from the store again when needed
			delete(w.sources, k)
			break
		}
	}
	w.sources[key] = s
	return s, nil
}

// TokenVersion returns a hash of the access token stored under key, ""
// when there is none this Web can use (see source).
func (w *Web) TokenVersion(ctx context.Context, key string) (string, error) {
	st, err := w.store.Load(ctx, key)
	if errors.Is(err, sealed.ErrUnreadable) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the OAuth token store: %w", err)
	}
	if st == nil || st.Token == nil || st.TokenURL == "" {
		return "", nil
	}
	tok := st.usable(w.dpop)
	if tok == nil || tok.AccessToken == "" {
		return "", nil
	}
	h := sha256.Sum256([]byte(tok.AccessToken))
	return hex.EncodeToString(h[:16]), nil
}

// forget drops the token source of key if it is still s (or whatever it
// is, for nil): the next request reads the store again.
func (w *Web) forget(key string, s *webSource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s == nil || w.sources[key] == s {
		delete(w.sources, key)
	}
}

// Complete ends the sign-in of principal whose callback carries query:
// it checks the state (sealed by this service's key, for principal, not
// expired, not used before), that the authorization server sent a code
// and no error (and, when it names itself, that it is the issuer), then
// exchanges the code at the issuer's token endpoint and stores the token.
// It returns the resource (the MCP server's URL) signed in to.
func (w *Web) Complete(ctx context.Context, principal string, query url.Values) (string, error) {
	raw := query.Get("state")
	if raw == "" {
		return "", errors.New("the callback has no state")
	}
	st, err := w.openState(raw)
	if err != nil {
		return "", err
	}
	if st.Principal != principal {
		return "", errors.New("the sign-in was started for another user: the state is not this user's")
	}
	if time.Now().UnixMilli() > st.Expires {
		return "", fmt.Errorf("the sign-in expired (it may take %v): start again", w.cfg.StateTTL)
	}
	if e := query.Get("error"); e != "" {
		msg := clean(e, 100)
		if d := query.Get("error_description"); d != "" {
			msg += ": " + clean(d, 200)
		}
		return "", fmt.Errorf("the authorization server refused: %s", msg)
	}
	code := query.Get("code")
	if code == "" {
		return "", errors.New("the authorization server sent the user back without a code")
	}
	hc := w.authClient(st.Resource)
	as, err := w.serverMeta(ctx, hc)
	if err != nil {
		return "", err
	}
	switch iss := query.Get("iss"); {
	case iss != "" && !w.isIssuer(iss):
		return "", fmt.Errorf("the callback names the issuer %q, not %s; the code was not used", clean(iss, 200), w.cfg.Issuer)
	case iss == "" && as.AuthorizationResponseIssParameterSupported:
		return "", errors.New("the authorization server names itself in its callbacks (RFC 9207) but this one has no iss")
	}
	if err := w.consume(ctx, st); err != nil {
		return "", err
	}
	oc := &oauth2.Config{
		ClientID:     w.cfg.ClientID,
		ClientSecret: w.cfg.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint, AuthStyle: authStyle(as.TokenEndpointAuthMethodsSupported)},
		RedirectURL:  w.cfg.RedirectURL,
		Scopes:       st.Scopes,
	}
	tok, err := oc.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), code,
		oauth2.VerifierOption(st.Verifier), oauth2.SetAuthURLParam("resource", st.Audience))
	if err != nil {
		return "", fmt.Errorf("exchanging the code: %w", scrubRetrieve(err))
	}
	key := TokenKey(st.Resource, principal)
	if err := w.store.Save(ctx, key, storedFrom(oc, tok, w.dpop)); err != nil {
		return "", fmt.Errorf("saving the token: %w", err)
	}
	w.mu.Lock()
	delete(w.sources, key)
	w.mu.Unlock()
	w.log.Info("signed in", "principal", principal, "resource", st.Resource)
	return st.Resource, nil
}

// authStyle picks how the client authenticates at the token endpoint, as
// go-sdk does: client_secret_post, then client_secret_basic, else trying
// both.
func authStyle(supported []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(supported, "client_secret_post"):
		return oauth2.AuthStyleInParams
	case slices.Contains(supported, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}

// clean shortens a value an authorization server or a browser sent, for
// an error: printable characters only, at most n bytes.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "..."
	}
	return s
}

// errStateUsed is the error of a state presented again.
var errStateUsed = errors.New("this sign-in has already been completed (a state is used once)")

// consume records that st is used, and fails if it was used before: in
// this process, and in the store for the other replicas (under
// signInsKey, as a list of the states used and not yet expired; with an
// Updater, atomically). A state the store could not record stays unused,
// here too: its callback may be presented again once the store is back.
func (w *Web) consume(ctx context.Context, st *webState) error {
	now := time.Now()
	w.mu.Lock()
	for n, exp := range w.used {
		if now.After(exp) {
			delete(w.used, n)
		}
	}
	if _, ok := w.used[st.Nonce]; ok {
		w.mu.Unlock()
		return errStateUsed
	}
	w.used[st.Nonce] = time.UnixMilli(st.Expires)
	w.mu.Unlock()

	recorded := false
	defer func() {
		if !recorded { // the state is not used: it may be presented again
			w.mu.Lock()
			delete(w.used, st.Nonce)
			w.mu.Unlock()
		}
	}()
	key := signInsKey(st.Resource, st.Principal)
	mark := func(cur *StoredToken) (*StoredToken, error) {
		var keep []string
		if cur != nil {
			for _, e := range cur.Scopes {
				nonce, exp, _ := strings.Cut(e, " ")
				if nonce == st.Nonce {
					return nil, errStateUsed
				}
				if t, err := time.Parse(time.RFC3339, exp); err == nil && now.Before(t) {
					keep = append(keep, e)
				}
			}
		}
		// The record is a StoredToken with no token and no token
		// endpoint, which no sign-in takes for a token. Each expiry is
		// kept to the millisecond (RFC 3339 with its fraction, which
		// time.Parse reads): a state stays recorded as long as it opens.
		return &StoredToken{Token: &oauth2.Token{}, Scopes: append(keep, st.Nonce+" "+time.UnixMilli(st.Expires).UTC().Format(time.RFC3339Nano))}, nil
	}
	if u, ok := w.store.(Updater); ok {
		update := func() error {
			return u.Update(ctx, key, func(_ context.Context, cur *StoredToken) (*StoredToken, error) { return mark(cur) })
		}
		err := update()
		if errors.Is(err, sealed.ErrUnreadable) {
			// A record sealed with another key (the store's key was
			// changed): the states it lists were sealed with another
			// key too, and open no more. An empty record replaces it.
			if err = w.store.Save(ctx, key, &StoredToken{Token: &oauth2.Token{}}); err == nil {
				err = update()
			}
		}
		if errors.Is(err, errStateUsed) {
			recorded = true // by another replica
			return errStateUsed
		}
		if err != nil {
			return fmt.Errorf("recording the sign-in in the token store: %w", err)
		}
		recorded = true
		return nil
	}
	cur, err := w.store.Load(ctx, key)
	if errors.Is(err, sealed.ErrUnreadable) {
		cur, err = nil, nil // sealed with another key: see above
	}
	if err != nil {
		return fmt.Errorf("reading the token store: %w", err)
	}
	next, err := mark(cur)
	if err != nil {
		recorded = true // by another replica
		return err
	}
	if err := w.store.Save(ctx, key, next); err != nil {
		return fmt.Errorf("recording the sign-in in the token store: %w", err)
	}
	recorded = true
	return nil
}
