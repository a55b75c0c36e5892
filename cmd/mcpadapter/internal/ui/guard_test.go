package ui_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
)

// The guard, played against by a web page in the user's browser: every
// request below is one a page on another site (or a DNS-rebound name, or
// another loopback port) can make the browser send to the inspector.

// client is an HTTP client that does not follow redirects or keep
// cookies, so that each request carries exactly what the test gives it.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// inspector is an inspector of the demo servers, reached over TCP.
type inspector struct {
	srv    *ui.Server
	base   string // http://127.0.0.1:PORT
	port   string
	token  string
	cookie *http.Cookie // set by login
	key    string       // set by login
}

func newInspector(t *testing.T) *inspector {
	t.Helper()
	rec := ui.NewRecorder()
	srv := startUI(t, demoSession(t, rec), rec, nil)
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	return &inspector{srv: srv, base: "http://" + u.Host, port: u.Port(), token: u.Query().Get("token")}
}

// request sends method path with the given headers (Host may be among
// them), the cookie when the inspector has one, and body as JSON.
func (in *inspector) request(t *testing.T, method, path string, headers map[string]string, body string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, in.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if in.cookie != nil {
		req.AddCookie(in.cookie)
	}
	if in.key != "" {
		req.Header.Set("X-Mcpadapter-Key", in.key)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// login trades the one-time token for the session cookie and key.
func (in *inspector) login(t *testing.T) {
	t.Helper()
	resp, _ := in.request(t, "GET", "/?token="+in.token, nil, "")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("token: status %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		in.cookie = c
	}
	if in.cookie == nil {
		t.Fatal("no cookie for the token")
	}
	in.key = sessionKey(t, resp)
}

// sessionKey returns the session key in the fragment of the address the
// token redirects to.
func sessionKey(t *testing.T, resp *http.Response) string {
	t.Helper()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.ParseQuery(loc.Fragment)
	if len(q.Get("key")) != 64 {
		t.Fatalf("no session key in the redirect to %q", resp.Header.Get("Location"))
	}
	return q.Get("key")
}

// origin is the inspector's own Origin header.
func (in *inspector) origin() map[string]string { return map[string]string{"Origin": in.base} }

// calls returns the calls the inspector made (as the page would ask).
func (in *inspector) calls(t *testing.T) string {
	t.Helper()
	resp, body := in.request(t, "GET", "/api/calls", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("/api/calls: %d %s", resp.StatusCode, body)
	}
	return body
}

const callForecast = `{"server":"weather","tool":"weather_forecast","args":{"city":"Paris"}}`

func TestGuardWithoutToken(t *testing.T) {
	in := newInspector(t)
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/", ""}, {"GET", "/app.js", ""}, {"GET", "/api/state", ""}, {"GET", "/api/trace/export.json", ""},
		{"POST", "/api/call", callForecast}, {"POST", "/api/reconnect", "{}"},
	} {
		resp, _ := in.request(t, r.method, r.path, in.origin(), r.body)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without the cookie: status %d, want 401", r.method, r.path, resp.StatusCode)
		}
	}
	// Before the token is used there is no session: an empty cookie and
	// an empty key are not it.
	in.cookie = &http.Cookie{Name: "mcpadapter_ui_" + in.port, Value: ""}
	if resp, _ := in.request(t, "GET", "/api/state", map[string]string{"X-Mcpadapter-Key": ""}, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an empty cookie before the token is used: status %d, want 401", resp.StatusCode)
	}
	in.cookie = nil
	// A guessed token and a forged cookie get nothing either.
	if resp, _ := in.request(t, "GET", "/?token="+strings.Repeat("0", len(in.token)), nil, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a wrong token: status %d, want 403", resp.StatusCode)
	}
	in.cookie = &http.Cookie{Name: "mcpadapter_ui_" + in.port, Value: strings.Repeat("a", 64)}
	if resp, _ := in.request(t, "GET", "/api/state", nil, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged cookie: status %d, want 401", resp.StatusCode)
	}
	in.cookie = nil
	in.login(t)
	if got := in.calls(t); got != "[]\n" {
		t.Errorf("requests without the token made calls: %s", got)
	}
}

func TestGuardTokenOnce(t *testing.T) {
	in := newInspector(t)
	resp, _ := in.request(t, "GET", "/?token="+in.token+"&tab=tools", nil, "")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/?tab=tools#key=") {
		t.Fatalf("the token: status %d, Location %q; want 303 to the URL without the token", resp.StatusCode, resp.Header.Get("Location"))
	}
	key := sessionKey(t, resp)
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Value == in.token || !strings.Contains(c.Name, in.port) {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, named for the port, not the token", c)
	}
	raw := resp.Header.Get("Set-Cookie")
	if !strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "SameSite=Strict") {
		t.Errorf("Set-Cookie %q", raw)
	}
	// The link works once.
	if resp, _ := in.request(t, "GET", "/?token="+in.token, nil, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the token used twice: status %d, want 403", resp.StatusCode)
	}
	in.cookie = c
	if resp, _ := in.request(t, "GET", "/api/state", nil, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/ with the cookie and no key: status %d, want 401", resp.StatusCode)
	}
	if resp, _ := in.request(t, "GET", "/api/state", map[string]string{"X-Mcpadapter-Key": strings.Repeat("0", len(key))}, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/ with the cookie and a wrong key: status %d, want 401", resp.StatusCode)
	}
	if resp, _ := in.request(t, "GET", "/app.js", nil, ""); resp.StatusCode != 200 {
		t.Errorf("the page's assets with the cookie: status %d", resp.StatusCode)
	}
	in.key = key
	if resp, body := in.request(t, "GET", "/api/state", nil, ""); resp.StatusCode != 200 || !strings.Contains(body, `"weather_forecast"`) {
		t.Errorf("with the cookie and key: %d %.200s", resp.StatusCode, body)
	}
	in.cookie = nil
	if resp, _ := in.request(t, "GET", "/api/state", nil, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/ with the key and no cookie: status %d, want 401", resp.StatusCode)
	}
	in.cookie = c
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
}

// TestGuardDNSRebinding: a page on attacker.example, whose name the
// attacker makes resolve to 127.0.0.1, talks to the inspector with its
// own name in the Host header. Even with the cookie (which the browser
// would not send there), nothing passes; neither does the token.
func TestGuardDNSRebinding(t *testing.T) {
	in := newInspector(t)
	for _, host := range []string{"attacker.example:" + in.port, "attacker.example", "127.0.0.1.nip.io:" + in.port, "10.0.0.1:" + in.port, "127.0.0.1:1", "localhost.attacker.example:" + in.port} {
		if resp, _ := in.request(t, "GET", "/?token="+in.token, map[string]string{"Host": host}, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %s with the token: status %d, want 403", host, resp.StatusCode)
		}
	}
	in.login(t) // the token was not used up by the refused requests
	for _, host := range []string{"attacker.example:" + in.port, "127.0.0.1.nip.io:" + in.port, "127.0.0.1:1"} {
		for _, r := range []struct{ method, path, body string }{{"GET", "/api/state", ""}, {"POST", "/api/call", callForecast}} {
			resp, _ := in.request(t, r.method, r.path, map[string]string{"Host": host, "Origin": "http://" + host}, r.body)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s with Host %s: status %d, want 403", r.method, r.path, host, resp.StatusCode)
			}
		}
	}
	for _, host := range []string{"localhost:" + in.port, "127.0.0.1:" + in.port, "[::1]:" + in.port, "127.0.0.2:" + in.port} {
		if resp, _ := in.request(t, "GET", "/api/state", map[string]string{"Host": host}, ""); resp.StatusCode != 200 {
			t.Errorf("Host %s: status %d, want 200", host, resp.StatusCode)
		}
	}
	if got := in.calls(t); got != "[]\n" {
		t.Errorf("rebound requests made calls: %s", got)
	}
}

// TestGuardOrigin: a page on another origin (another site, another
// loopback port, a sandboxed frame) gets the browser to send the cookie
// along; its Origin (or Sec-Fetch-Site) gives it away.
func TestGuardOrigin(t *testing.T) {
	in := newInspector(t)
	in.login(t)
	for _, headers := range []map[string]string{
		{"Origin": "http://attacker.example"},
		{"Origin": "null"},
		{"Origin": "http://127.0.0.1:1"},
		{"Origin": "http://localhost:1"},
		{"Origin": "https://127.0.0.1:" + in.port},
		{}, // no Origin on a request that changes something
		{"Origin": in.base, "Sec-Fetch-Site": "same-site"},
		{"Origin": in.base, "Sec-Fetch-Site": "cross-site"},
	} {
		if resp, _ := in.request(t, "POST", "/api/call", headers, callForecast); resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST with %v: status %d, want 403", headers, resp.StatusCode)
		}
	}
	for _, headers := range []map[string]string{{"Origin": "http://attacker.example"}, {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"}} {
		if resp, _ := in.request(t, "GET", "/api/trace/export.json", headers, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET with %v: status %d, want 403", headers, resp.StatusCode)
		}
	}
	// A body a form can send (text/plain, urlencoded) is refused even
	// with the page's own Origin.
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"} {
		if resp, _ := in.request(t, "POST", "/api/call", map[string]string{"Origin": in.base, "Content-Type": ct}, callForecast); resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("POST as %s: status %d, want 415", ct, resp.StatusCode)
		}
	}
	if got := in.calls(t); got != "[]\n" {
		t.Errorf("cross-origin requests made calls: %s", got)
	}
	if resp, body := in.request(t, "POST", "/api/call", map[string]string{"Origin": in.base, "Sec-Fetch-Site": "same-origin"}, callForecast); resp.StatusCode != 200 {
		t.Errorf("POST from the page itself: %d %s", resp.StatusCode, body)
	}
}

// TestNoRequestNamesACommandOrURL replays the requests of the advisories
// against the official inspector's proxy (CVE-2025-49596: its /sse and
// /mcp endpoints ran the command a request named) and MCPJam's
// (CVE-2026-23744: /api/mcp/connect took a server config), and puts a
// command and a URL into every endpoint's body — with a valid cookie,
// Host and Origin. No process runs and no connection is made.
func TestNoRequestNamesACommandOrURL(t *testing.T) {
	in := newInspector(t)
	in.login(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	var hits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer canary.Close()
	q := url.Values{"transportType": {"stdio"}, "command": {"touch"}, "args": {marker}, "url": {canary.URL}}
	for _, path := range []string{"/sse?" + q.Encode(), "/mcp?" + q.Encode(), "/stdio?" + q.Encode(), "/api/state?" + q.Encode()} {
		in.request(t, "GET", path, in.origin(), "")
		in.request(t, "POST", path, in.origin(), "{}")
	}
	connect := `{"serverConfig":{"command":"touch","args":["` + marker + `"],"url":"` + canary.URL + `"},"serverId":"x"}`
	for _, path := range []string{"/api/mcp/connect", "/api/mcp/servers", "/config"} {
		if resp, _ := in.request(t, "POST", path, in.origin(), connect); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: status %d", path, resp.StatusCode)
		}
	}
	extra := `"command":"touch","args":["` + marker + `"],"url":"` + canary.URL + `","target":"` + canary.URL + `"`
	for _, path := range []string{"/api/call", "/api/reconnect", "/api/resource", "/api/prompt", "/api/complete", "/api/task/cancel", "/api/search", "/api/saved", "/api/saved/run", "/api/saved/import"} {
		body := `{"server":"weather","tool":"weather_forecast","args":{},` + extra + `}`
		if path == "/api/saved/import" {
			body = `[{"server":"weather","tool":"weather_forecast",` + extra + `}]`
		}
		if resp, text := in.request(t, "POST", path, in.origin(), body); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s with a command and a URL: status %d %s, want 400", path, resp.StatusCode, text)
		}
	}
	// A server name that is not one of the session's is not connected to.
	for _, path := range []string{"/api/resources?server=" + url.QueryEscape(canary.URL), "/api/prompts?server=" + url.QueryEscape("touch "+marker)} {
		if resp, _ := in.request(t, "GET", path, nil, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, resp.StatusCode)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a request ran a command")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the inspector connected to a URL a request named (%d requests)", n)
	}
}

// otherAddr is a listener that says it listens on another address.
type otherAddr struct {
	net.Listener
	addr net.Addr
}

func (l otherAddr) Addr() net.Addr { return l.addr }

// TestServeLoopbackOnly: the inspector refuses to serve on an address
// other machines can reach.
func TestServeLoopbackOnly(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec := ui.NewRecorder()
	s := demoSession(t, rec)
	for _, ip := range []string{"0.0.0.0", "192.0.2.1", "::"} {
		srv, err := ui.Serve(otherAddr{l, &net.TCPAddr{IP: net.ParseIP(ip), Port: 4000}}, &ui.Options{Session: s, Recorder: rec})
		if err == nil {
			_ = srv.Close()
			t.Errorf("Serve on %s: no error", ip)
		}
	}
}

// TestBodyLimit: a request body over 4 MB is refused, not read whole.
func TestBodyLimit(t *testing.T) {
	in := newInspector(t)
	in.login(t)
	big := `[{"server":"weather","tool":"weather_forecast","args":{"pad":"` + strings.Repeat("x", 5<<20) + `"},"expected":{"isError":false,"content":[],"modelText":""}}]`
	if resp, _ := in.request(t, "POST", "/api/saved/import", in.origin(), big); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a 5 MB import: status %d, want 400", resp.StatusCode)
	}
	if _, body := in.request(t, "GET", "/api/saved", nil, ""); body != "[]\n" {
		t.Errorf("the 5 MB import was kept: %.100s", body)
	}
}
