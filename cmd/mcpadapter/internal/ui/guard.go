package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// A guard decides whether a request may reach the inspector. The page is
// a server on a loopback port, and every web page the user opens can send
// requests to it, so nothing passes without all of these:
//
//   - the Host header names a loopback host (localhost, 127.0.0.0/8, ::1)
//     and the inspector's port: a page on another name that resolves to
//     127.0.0.1 (DNS rebinding) is refused;
//   - the Origin, when the browser sends one, is the inspector's own, and
//     every request that changes something (not GET or HEAD) must carry
//     it; Sec-Fetch-Site, when sent, says same-origin or none (a page on
//     another loopback port is "same-site", and is refused);
//   - the session cookie, compared in constant time. The cookie is
//     HttpOnly and SameSite=Strict; it is had once, by visiting the URL
//     with the one-time token the command prints, which then stops
//     working and is taken out of the address bar by a redirect;
//   - on /api/, also the session key in the X-Mcpadapter-Key header.
//     Browsers keep cookies apart by host, not port, so the cookie goes
//     along to every other server on 127.0.0.1 the user visits (an MCP
//     server's sign-in page, say), which could replay it. The key is
//     given once, in the redirect's fragment (never sent to a server);
//     the page keeps it in its origin's storage, which other ports
//     cannot read, and sends it with each request.
type guard struct {
	port string
	// cookie is the name of the session cookie: cookies are not kept
	// apart by port, so each inspector names its own.
	cookie string

	// csp is the page's Content-Security-Policy.
	csp string

	mu      sync.Mutex
	token   string // the one-time token; "" once used
	session string // the cookie's value, set when the token is used
	key     string // the key /api/ requests carry, set when the token is used
}

// keyHeader is the header that carries the session key.
const keyHeader = "X-Mcpadapter-Key"

// newGuard returns a guard for an inspector listening on port, whose
// page may frame the views served at viewsOrigin.
func newGuard(port, viewsOrigin string) *guard {
	return &guard{port: port, cookie: "mcpadapter_ui_" + port, token: randomHex(24), csp: csp + "; frame-src " + viewsOrigin}
}

// randomHex returns n random bytes, hex-encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	return hex.EncodeToString(b)
}

// loopbackHost reports whether host (no port) is a loopback name or
// address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

// hostOK reports whether hostport (a Host header, or an Origin's host)
// is a loopback host with the given port.
func hostOK(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	return err == nil && p == port && loopbackHost(host)
}

// check returns the HTTP status refusing r and why, or 0 when the
// request passes everything but the session (see authorized).
func (g *guard) check(r *http.Request) (int, string) {
	if !hostOK(r.Host, g.port) {
		return http.StatusForbidden, "the Host header must name this inspector on a loopback address"
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return http.StatusForbidden, "requests from other sites are refused"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return http.StatusForbidden, "a request that changes something must carry its Origin"
		}
		return 0, ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || origin != "http://"+u.Host || !hostOK(u.Host, g.port) {
		return http.StatusForbidden, "requests from other origins are refused"
	}
	return 0, ""
}

// authorized reports whether r carries the session cookie, and the
// session key when it asks for /api/.
func (g *guard) authorized(r *http.Request) bool {
	c, err := r.Cookie(g.cookie)
	if err != nil {
		return false
	}
	g.mu.Lock()
	session, key := g.session, g.key
	g.mu.Unlock()
	if session == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(session)) != 1 {
		return false
	}
	return !strings.HasPrefix(r.URL.Path, "/api/") || subtle.ConstantTimeCompare([]byte(r.Header.Get(keyHeader)), []byte(key)) == 1
}

// exchange uses the one-time token: when token is it, the token stops
// working and the session cookie's value and the session key are
// returned.
func (g *guard) exchange(token string) (session, key string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(g.token)) != 1 {
		return "", "", false
	}
	g.token = ""
	g.session, g.key = randomHex(32), randomHex(32)
	return g.session, g.key, true
}

// wrap returns next behind the guard.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header(), g.csp)
		if code, why := g.check(r); code != 0 {
			http.Error(w, why, code)
			return
		}
		if q := r.URL.Query(); q.Has("token") {
			session, key, ok := g.exchange(q.Get("token"))
			if !ok {
				http.Error(w, "this link's token is wrong or was used already: open the inspector in the browser that used it, or start mcpadapter ui again for a new link", http.StatusForbidden)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode(), Fragment: "key=" + key}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if !g.authorized(r) {
			http.Error(w, "open the inspector with the link mcpadapter ui printed (it holds a one-time token)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// csp is the page's Content-Security-Policy, to which the guard adds the
// views' origin as the only frame-src: its own scripts and styles only,
// no inline script (so a javascript: URL cannot run either), images and
// audio from data: URLs (tool results), and no connection anywhere but
// back to the inspector.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; " +
	"connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// securityHeaders sets the headers every answer carries.
func securityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
