package gateway

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The sign-in pages (SignInOptions), three GET endpoints under
// SignInOptions.URL:
//
//   - /oauth/start?t=LINK, the URL of the question: LINK is sealed and
//     names the principal, the server, the authorization URL and an
//     expiry. The page knows the browser's user (its session cookie, set
//     by /oauth/login, or SignInOptions.Authenticate); with none it sends
//     the browser to sign in at the gateway's own authorization server
//     first. A user who is not the link's principal is refused: a link
//     sent to someone else signs no one in (the spec's URL-mode
//     elicitation phishing). The page then sets a cookie binding this
//     browser to this sign-in (its principal, server and state) and
//     sends it to the server's authorization server.
//   - /oauth/login: the gateway's authorization server's redirect. Its
//     state is bound to the browser that started it (a cookie with the
//     same nonce), so nobody's login can be planted in another browser;
//     the access token it gets is checked as the gateway checks any
//     (SignInLogin.Verify), and the principal it names becomes the
//     browser's session at the pages.
//   - /oauth/callback: the server's authorization server's redirect. It
//     needs the browser's session and the binding cookie of this very
//     state, both of the principal the state was sealed for; then
//     mcpadapter.WebSignIn.Complete exchanges the code and keeps the
//     token for that principal.

// Cookie names of the pages (with the __Host- prefix on https: see
// signInPages.cookie).
const (
	cookieUser  = "mcpgw_user"  // the browser's user: sealed principal and expiry
	cookieLogin = "mcpgw_login" // a login under way: its nonce and the link
	cookieFlow  = "mcpgw_flow"  // a sign-in under way: principal, server, state's hash
)

// signInPages serves the pages and makes the links.
type signInPages struct {
	g      *Gateway
	opts   SignInOptions
	base   string // URL without a trailing slash
	path   string // the pages' path prefix, ending in "/oauth/"
	secure bool   // https: cookies are Secure
	ttl    time.Duration
	aead   cipher.AEAD
	hc     *http.Client

	mu     sync.Mutex
	meta   *oauthex.AuthServerMeta // the login issuer's
	metaAt time.Time
}

func newSignInPages(g *Gateway, o *SignInOptions) (*signInPages, error) {
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	block, err := aes.NewCipher(subKey(o.Key, "pages"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(o.URL)
	p := &signInPages{g: g, opts: *o, base: strings.TrimSuffix(o.URL, "/"), path: strings.TrimSuffix(u.Path, "/") + "/oauth/",
		secure: u.Scheme == "https", ttl: o.TTL, aead: aead, hc: o.HTTPClient}
	if p.ttl == 0 {
		p.ttl = defaultSignInTTL
	}
	if p.hc == nil {
		p.hc = &http.Client{Timeout: 30 * time.Second}
	}
	return p, nil
}

// webURL checks a URL of the pages or of an authorization server: https,
// or http on a loopback host, with no fragment.
func webURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Fragment != "" || u.RawQuery != "":
		return errors.New("want an absolute URL without a query or fragment")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopbackName(u.Hostname()):
		return nil
	}
	return errors.New("want https (http only on a loopback host)")
}

func loopbackName(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// seal returns v's JSON sealed for use, base64url.
func (p *signInPages) seal(use string, v any) string {
	b, _ := json.Marshal(v) // plain structs: no error
	nonce := make([]byte, p.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(p.aead.Seal(nonce, nonce, b, []byte(use)))
}

// open opens what seal sealed for use into v.
func (p *signInPages) open(use, raw string, v any) error {
	bad := errors.New("not one this gateway made (altered, too long, or sealed with another key)")
	if len(raw) > 8192 {
		return bad
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) < p.aead.NonceSize() {
		return bad
	}
	n := p.aead.NonceSize()
	plain, err := p.aead.Open(nil, b[:n], b[n:], []byte(use))
	if err != nil || json.Unmarshal(plain, v) != nil {
		return bad
	}
	return nil
}

// ticket is what a link carries (sealed). The principal is kept as its
// bytes: JSON would change one that is not valid UTF-8.
type ticket struct {
	P  []byte `json:"p"`
	S  string `json:"s"` // server
	U  string `json:"u"` // the authorization URL
	ID string `json:"i"` // elicitation ID
	E  int64  `json:"e"` // expiry, Unix ms
}

// link returns the start page's URL of a sign-in of principal to server
// at the authorization URL authURL, and the elicitation's ID.
func (p *signInPages) link(principal, server, authURL string) (string, string, error) {
	if principal == "" {
		return "", "", errors.New("the request has no principal: only an authenticated user can sign in")
	}
	id := newElicitationID()
	t := p.seal("link", ticket{P: []byte(principal), S: server, U: authURL, ID: id, E: time.Now().Add(p.ttl).UnixMilli()})
	return p.base + "/oauth/start?t=" + t, id, nil
}

// SignInHandler returns the handler of the sign-in pages (SignInOptions):
// mount it at the path of SignInOptions.URL + "/oauth/", outside the
// resource server's Guard. Without Options.SignIn it answers 404.
func (g *Gateway) SignInHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.pages == nil {
			http.NotFound(w, r)
			return
		}
		g.pages.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the three pages, on GET only.
func (p *signInPages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	if !p.g.hostAllowed(r.Host) {
		page(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name or an allowed host.", r.Host))
		return
	}
	if r.Method != http.MethodGet {
		h.Set("Allow", "GET")
		page(w, http.StatusMethodNotAllowed, "Only GET.")
		return
	}
	switch strings.TrimPrefix(r.URL.Path, p.path) {
	case "start":
		p.start(w, r)
	case "login":
		p.login(w, r)
	case "callback":
		p.callback(w, r)
	default:
		http.NotFound(w, r)
	}
}

// addressText matches what names a place inside the gateway's network in
// an error: a URL, an IP address (v4 or v6, bracketed or not, with its
// port or not), a host with its port, a host name with a dot.
var addressText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"']*[^\s"':,.;)]` +
	`|\[[0-9a-fA-F:.]+\](:[0-9]+)?` +
	`|\b[0-9]{1,3}(\.[0-9]{1,3}){3}(:[0-9]+)?\b` +
	`|\b[a-zA-Z0-9.-]+:[0-9]{2,5}\b` +
	`|(\b[0-9a-fA-F]{1,4})?(:[0-9a-fA-F]{0,4}){1,7}:[0-9a-fA-F]{1,4}\b` +
	`|\b([a-zA-Z0-9-]+\.)+[a-zA-Z][a-zA-Z0-9-]*\b`)

// lookupText matches the host a DNS lookup in an error names, dotted or
// not ("lookup redis on ...").
var lookupText = regexp.MustCompile(`\blookup [^\s:,;()"']+`)

// withoutAddresses is the text of an error shown to a browser: why, not
// where (the token endpoint, the store); the log has the whole error.
func withoutAddresses(text string) string {
	text = lookupText.ReplaceAllString(text, "lookup (an address)")
	return addressText.ReplaceAllString(text, "(an address)")
}

// page answers with a short plain-text page.
func page(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintln(w, text)
}

// refuse answers status with text and logs why (no secret: reason is
// written by the gateway).
func (p *signInPages) refuse(w http.ResponseWriter, r *http.Request, status int, text, reason string, args ...any) {
	p.g.log.Warn("sign-in page refused", append([]any{"page", strings.TrimPrefix(r.URL.Path, p.path), "reason", reason}, args...)...)
	page(w, status, text)
}

// cookie sets a cookie of the pages (HttpOnly, SameSite=Lax: the
// authorization servers' redirects are top-level navigations from other
// sites); an empty value deletes it. On https it is a __Host- cookie
// (Secure, no Domain, Path "/"), which a browser takes from this host
// only: a site on a sibling host cannot set it (cookie tossing), so it
// cannot put its user's session, login or sign-in in another's browser.
// On http (a loopback host) it is a plain cookie of the pages' path.
func (p *signInPages) cookie(w http.ResponseWriter, name, value string) {
	c := &http.Cookie{Name: p.cookieName(name), Value: value, Path: p.path, HttpOnly: true, Secure: p.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(p.ttl / time.Second)}
	if p.secure {
		c.Path = "/"
	}
	if value == "" {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// cookieName is the name the pages' cookie name is set under: with the
// __Host- prefix on https (see cookie).
func (p *signInPages) cookieName(name string) string {
	if p.secure {
		return "__Host-" + name
	}
	return name
}

// readCookie returns the value of the pages' cookie name in r, "" for
// none.
func (p *signInPages) readCookie(r *http.Request, name string) string {
	c, err := r.Cookie(p.cookieName(name))
	if err != nil {
		return ""
	}
	return c.Value
}

// userSession is the browser's session at the pages (cookieUser).
type userSession struct {
	P []byte `json:"p"`
	E int64  `json:"e"`
}

// browserUser returns the principal of the browser of r, "" for none.
func (p *signInPages) browserUser(r *http.Request) (string, error) {
	if p.opts.Authenticate != nil {
		return p.opts.Authenticate(r)
	}
	var s userSession
	if p.open("user", p.readCookie(r, cookieUser), &s) != nil || time.Now().UnixMilli() > s.E {
		return "", nil
	}
	return string(s.P), nil
}

// flow binds a browser to the sign-in it started (cookieFlow).
type flow struct {
	P []byte   `json:"p"`
	S string   `json:"s"`
	H [32]byte `json:"h"` // sha256 of the state
	E int64    `json:"e"`
}

// start serves /oauth/start: the link's page.
func (p *signInPages) start(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("t")
	var t ticket
	if err := p.open("link", raw, &t); err != nil || time.Now().UnixMilli() > t.E {
		p.refuse(w, r, http.StatusBadRequest, "This sign-in link is not valid: it expired, was altered, or is another gateway's. Make the request again from your client for a new one.", "a link that does not open or has expired")
		return
	}
	who, err := p.browserUser(r)
	if err != nil {
		p.refuse(w, r, http.StatusServiceUnavailable, "The gateway could not tell who you are; try again later.", "the browser's user could not be known", "err", err)
		return
	}
	if who == "" {
		if p.opts.Login == nil {
			p.refuse(w, r, http.StatusUnauthorized, "Sign in to the gateway's site in this browser first, then open the link again.", "a browser with no user")
			return
		}
		p.beginLogin(w, r, raw)
		return
	}
	if who != string(t.P) {
		p.refuse(w, r, http.StatusForbidden, "This sign-in link was made for another user of the gateway. Open the link your own client showed you.",
			"a link of another principal", "browser_principal", who, "link_principal", string(t.P), "server", t.S)
		return
	}
	au, err := url.Parse(t.U)
	if err != nil || (au.Scheme != "https" && au.Scheme != "http") {
		p.refuse(w, r, http.StatusBadRequest, "This sign-in link is not valid.", "an authorization URL that is not http(s)")
		return
	}
	p.cookie(w, cookieFlow, p.seal("flow", flow{P: t.P, S: t.S, H: sha256.Sum256([]byte(au.Query().Get("state"))), E: t.E}))
	http.Redirect(w, r, t.U, http.StatusSeeOther)
}

// loginState is the state of a login at the gateway's own authorization
// server (sealed); loginCookie the cookie of the browser that started it.
type loginState struct {
	V string `json:"v"` // PKCE verifier
	N string `json:"n"` // nonce, also in the cookie
	E int64  `json:"e"`
}

type loginCookie struct {
	N string `json:"n"`
	T string `json:"t"` // the link to go back to
}

// loginConfig returns the OAuth client of the login.
func (p *signInPages) loginConfig(ctx context.Context) (*oauth2.Config, error) {
	l := p.opts.Login
	p.mu.Lock()
	m, at := p.meta, p.metaAt
	p.mu.Unlock()
	if m == nil || time.Since(at) > 10*time.Minute {
		var err error
		m, err = oauthex.GetAuthServerMeta(ctx, strings.TrimSuffix(l.Issuer, "/")+"/.well-known/oauth-authorization-server", l.Issuer, p.hc)
		if err != nil {
			return nil, fmt.Errorf("the gateway's authorization server's metadata: %w", err)
		}
		if m == nil || m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
			return nil, errors.New("the gateway's authorization server publishes no authorization or token endpoint")
		}
		p.mu.Lock()
		p.meta, p.metaAt = m, time.Now()
		p.mu.Unlock()
	}
	return &oauth2.Config{ClientID: l.ClientID, ClientSecret: l.ClientSecret, Scopes: l.Scopes, RedirectURL: p.base + "/oauth/login",
		Endpoint: oauth2.Endpoint{AuthURL: m.AuthorizationEndpoint, TokenURL: m.TokenEndpoint}}, nil
}

// beginLogin sends the browser to sign in at the gateway's own
// authorization server, to come back to the link raw.
func (p *signInPages) beginLogin(w http.ResponseWriter, r *http.Request, raw string) {
	oc, err := p.loginConfig(r.Context())
	if err != nil {
		p.refuse(w, r, http.StatusServiceUnavailable, "The gateway cannot sign you in now; try again later.", "no login", "err", err)
		return
	}
	st := loginState{V: oauth2.GenerateVerifier(), N: rand.Text(), E: time.Now().Add(p.ttl).UnixMilli()}
	p.cookie(w, cookieLogin, p.seal("login-cookie", loginCookie{N: st.N, T: raw}))
	http.Redirect(w, r, oc.AuthCodeURL(p.seal("login", st), oauth2.S256ChallengeOption(st.V),
		oauth2.SetAuthURLParam("resource", p.opts.Login.Resource)), http.StatusSeeOther)
}

// login serves /oauth/login: the end of a login at the gateway's own
// authorization server.
func (p *signInPages) login(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var st loginState
	var lc loginCookie
	switch {
	case p.open("login", q.Get("state"), &st) != nil:
		p.refuse(w, r, http.StatusBadRequest, "This login is not valid. Open your sign-in link again.", "a login state that does not open")
		return
	case time.Now().UnixMilli() > st.E:
		p.refuse(w, r, http.StatusBadRequest, "This login took too long. Open your sign-in link again.", "an expired login")
		return
	case p.open("login-cookie", p.readCookie(r, cookieLogin), &lc) != nil || !hmac.Equal([]byte(lc.N), []byte(st.N)):
		p.refuse(w, r, http.StatusForbidden, "This login was not started in this browser. Open your sign-in link again.", "a login without its browser's cookie")
		return
	case q.Get("error") != "":
		p.refuse(w, r, http.StatusForbidden, "The gateway's authorization server did not sign you in.", "the login was refused")
		return
	case q.Get("iss") != "" && strings.TrimSuffix(q.Get("iss"), "/") != strings.TrimSuffix(p.opts.Login.Issuer, "/"):
		p.refuse(w, r, http.StatusBadRequest, "This login came from another authorization server.", "a login naming another issuer")
		return
	}
	p.cookie(w, cookieLogin, "")
	oc, err := p.loginConfig(r.Context())
	if err != nil {
		p.refuse(w, r, http.StatusServiceUnavailable, "The gateway cannot sign you in now; try again later.", "no login", "err", err)
		return
	}
	ctx := context.WithValue(r.Context(), oauth2.HTTPClient, p.hc)
	tok, err := oc.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(st.V), oauth2.SetAuthURLParam("resource", p.opts.Login.Resource))
	if err != nil {
		p.refuse(w, r, http.StatusForbidden, "The gateway's authorization server did not sign you in.", "the login's code was refused", "err", scrubOAuth(err))
		return
	}
	who, err := p.opts.Login.Verify(r.Context(), tok.AccessToken)
	if err != nil || who == "" {
		p.refuse(w, r, http.StatusForbidden, "The gateway does not take the sign-in you made.", "the login's token was refused", "err", err)
		return
	}
	p.cookie(w, cookieUser, p.seal("user", userSession{P: []byte(who), E: time.Now().Add(p.ttl).UnixMilli()}))
	http.Redirect(w, r, p.base+"/oauth/start?t="+url.QueryEscape(lc.T), http.StatusSeeOther)
}

// scrubOAuth reports a token endpoint's refusal by its error code only.
func scrubOAuth(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return fmt.Errorf("the token endpoint answered %d %s", status, re.ErrorCode)
	}
	return err
}

// callback serves /oauth/callback: the end of a sign-in to a server.
func (p *signInPages) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	who, err := p.browserUser(r)
	if err != nil {
		p.refuse(w, r, http.StatusServiceUnavailable, "The gateway could not tell who you are; try again later.", "the browser's user could not be known", "err", err)
		return
	}
	var f flow
	switch {
	case who == "":
		p.refuse(w, r, http.StatusUnauthorized, "This browser has not signed in to the gateway: a sign-in ends in the browser that opened its link.", "a callback in a browser with no user")
		return
	case p.open("flow", p.readCookie(r, cookieFlow), &f) != nil || time.Now().UnixMilli() > f.E:
		p.refuse(w, r, http.StatusForbidden, "This sign-in was not started in this browser. Make the request again from your client and open the new link.", "a callback without its browser's cookie", "browser_principal", who)
		return
	}
	h := sha256.Sum256([]byte(q.Get("state")))
	if !hmac.Equal(h[:], f.H[:]) || string(f.P) != who {
		p.refuse(w, r, http.StatusForbidden, "This sign-in is not the one this browser started for you. Make the request again from your client and open the new link.",
			"a callback of another sign-in or principal", "browser_principal", who, "server", f.S)
		return
	}
	u := p.g.upstreamNamed(f.S)
	if u == nil || u.web == nil {
		p.refuse(w, r, http.StatusNotFound, "The gateway no longer has this server.", "a callback for a server gone", "server", f.S)
		return
	}
	if err := u.web.Complete(r.Context(), who, q); err != nil {
		p.refuse(w, r, http.StatusBadRequest, "The sign-in did not complete: "+withoutAddresses(err.Error()), "the sign-in did not complete", "server", f.S, "err", err)
		return
	}
	p.cookie(w, cookieFlow, "")
	p.g.signInCompleted(who, f.S)
	page(w, http.StatusOK, fmt.Sprintf("Signed in to %s. Go back to your client: it can make the request again.", f.S))
}

// upstreamNamed returns the server named name, or nil.
func (g *Gateway) upstreamNamed(name string) *upstream {
	g.upsMu.Lock()
	defer g.upsMu.Unlock()
	for _, u := range g.ups {
		if u.name == name {
			return u
		}
	}
	return nil
}
