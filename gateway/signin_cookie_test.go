package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// siteCert returns a self-signed certificate for hosts, and a pool that
// trusts it.
func siteCert(t *testing.T, hosts ...string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// sites is a DNS of its own: each name:443 dials the listener given,
// trusting the sites' certificate; any other address is dialed as it is.
func sites(pool *x509.CertPool, names map[string]string) *http.Transport {
	var d net.Dialer
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := names[addr]; ok {
				addr = to
			}
			return d.DialContext(ctx, network, addr)
		}}
}

// prefixJar is a browser's cookie jar as RFC 6265bis has it: a cookie
// whose name begins with __Secure- is kept only when Secure and set over
// https, one beginning with __Host- only when moreover it names no
// Domain and its Path is "/" (so no other host can set it). Go's jar
// keeps them all.
type prefixJar struct{ *cookiejar.Jar }

func (j prefixJar) SetCookies(u *url.URL, cs []*http.Cookie) {
	var keep []*http.Cookie
	for _, c := range cs {
		secure := c.Secure && u.Scheme == "https"
		switch {
		case strings.HasPrefix(c.Name, "__Secure-") && !secure:
		case strings.HasPrefix(c.Name, "__Host-") && (!secure || c.Domain != "" || c.Path != "/"):
		default:
			keep = append(keep, c)
		}
	}
	j.Jar.SetCookies(u, keep)
}

// userVia marks each request as made by user's browser (testauth's
// UserHeader), sent through next.
type userVia struct {
	user string
	next http.RoundTripper
}

func (u userVia) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(testauth.UserHeader, u.user)
	return u.next.RoundTrip(r)
}

// bearerVia sends each request with tok, through next.
type bearerVia struct {
	tok  string
	next http.RoundTripper
}

func (b bearerVia) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.next.RoundTrip(r)
}

// TestSignInCookieTossing plays mallory, a user of the gateway who also
// runs a site on a sibling host (evil.example.com, next to the gateway's
// gw.example.com): she signs in at the gateway's pages in her own
// browser, copies the cookies the pages gave it, and has her site set
// them for the whole domain in alice's browser (cookie tossing; a
// browser that obeys the __Host- and __Secure- prefixes). Then alice
// opens mallory's sign-in link. The pages must not take mallory's
// session in alice's browser: alice is not signed in to the server for
// mallory, and mallory's call still asks her to sign in.
func TestSignInCookieTossing(t *testing.T) {
	cert, pool := siteCert(t, "gw.example.com", "evil.example.com")
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gwAddr := ln.Addr().String()
	base := "https://gw.example.com"
	e := &signInEnv{url: base + "/mcp", base: base, logs: &lockedBuffer{}}
	e.gwAS = startGatewayAS(t, e.url)
	e.upAS = startUpAS(t)
	servers := []gateway.Server{{Name: "up", SignIn: &gateway.SignIn{Issuer: e.upAS.URL, ClientID: upClient, ClientSecret: upSecret,
		Scopes: []string{testauth.BaseScope}}, Target: e.upAS.MCPURL}}
	e.gw = signInGateway(t, tls.NewListener(ln, tlsConf), base, e.gwAS, servers, []byte("0123456789abcdef0123456789abcdef"), nil, e.logs,
		func(o *gateway.Options) { o.AllowedHosts = []string{"gw.example.com"} })

	// mallory's site sets the cookies it is given for the whole domain,
	// under each name and on both paths.
	var tossMu sync.Mutex
	var toss []*http.Cookie
	evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tossMu.Lock()
		defer tossMu.Unlock()
		for _, c := range toss {
			for _, path := range []string{"/", "/oauth/"} {
				http.SetCookie(w, &http.Cookie{Name: c.Name, Value: c.Value, Domain: "example.com", Path: path,
					Secure: true, HttpOnly: true, SameSite: http.SameSiteNoneMode, MaxAge: 600})
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	evil.TLS = tlsConf
	evil.StartTLS()
	t.Cleanup(evil.Close)
	tr := sites(pool, map[string]string{"gw.example.com:443": gwAddr, "evil.example.com:443": evil.Listener.Addr().String()})
	t.Cleanup(tr.CloseIdleConnections)
	browserOf := func(user string) *browser {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		return &browser{user: user, hc: &http.Client{Jar: prefixJar{jar}, Transport: userVia{user, tr}, Timeout: 20 * time.Second}}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}})
	mallory, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url,
		HTTPClient: &http.Client{Transport: bearerVia{e.token(t, "mallory"), tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mallory.Close() })
	mLink, _ := e.askedLink(t, ctx, mallory)

	mb := browserOf("mallory")
	mb.until(t, mLink, func(u *url.URL) bool { return strings.HasPrefix(u.String(), e.upAS.URL+"/authorize") })
	pages, _ := url.Parse(base + "/oauth/start")
	tossMu.Lock()
	toss = mb.hc.Jar.Cookies(pages)
	tossMu.Unlock()
	if len(toss) == 0 {
		t.Fatal("mallory's browser got no cookie from the pages")
	}

	ab := browserOf("alice")
	if status, _ := ab.open(t, "https://evil.example.com/"); status != http.StatusOK {
		t.Fatalf("mallory's site: %d", status)
	}
	status, text := ab.open(t, mLink)
	if status != http.StatusForbidden || !strings.Contains(text, "another user") {
		t.Fatalf("mallory's link in alice's browser, after mallory's site tossed its cookies: %d %q", status, text)
	}
	stillAsks(t, ctx, mallory, "mallory")
	for _, r := range e.upAS.Requests() {
		if r.User == "alice" && r.Authorization != "" {
			t.Fatal("the server got a request with a token of alice's sign-in")
		}
	}
}

// TestSignInPagesHostileRequests plays a hostile client and a web page
// against the pages: a Host or X-Forwarded-Host naming another site (the
// redirect URLs come from SignInOptions.URL, never the request), extra
// parameters that would pick where the browser goes (redirect_uri, next,
// return_to), huge, garbage and repeated parameters, other methods. Every
// redirect of a whole sign-in stays among the gateway and the two
// authorization servers, and the cookies are HttpOnly, SameSite=Lax, of
// the pages' path.
func TestSignInPagesHostileRequests(t *testing.T) {
	e := startSignIn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.sdkClient(t, ctx, e.token(t, "alice"), true)
	link, _ := e.askedLink(t, ctx, alice)
	raw := func(method, u, host string, hdr map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Transport{}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	t.Run("host", func(t *testing.T) {
		if resp := raw(http.MethodGet, link, "evil.example", nil); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
			t.Fatalf("Host evil.example: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		resp := raw(http.MethodGet, link+"&redirect_uri=https://evil.example/&next=https://evil.example/&return_to=//evil.example",
			"", map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https", "Forwarded": "host=evil.example"})
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, e.gwAS.URL+"/") || strings.Contains(loc, "evil") ||
			!strings.Contains(loc, "redirect_uri="+url.QueryEscape(e.base+"/oauth/login")) {
			t.Fatalf("the start page sent the browser to %q (%d)", loc, resp.StatusCode)
		}
	})
	t.Run("every redirect", func(t *testing.T) {
		b := newBrowser(t, "alice")
		hc := *b.hc
		var hops []string
		hc.CheckRedirect = func(r *http.Request, via []*http.Request) error {
			u := r.URL.String()
			hops = append(hops, u)
			if !strings.HasPrefix(u, e.base+"/oauth/") && !strings.HasPrefix(u, e.gwAS.URL+"/") && !strings.HasPrefix(u, e.upAS.URL+"/") {
				t.Errorf("a redirect to %s", u)
			}
			// A hostile page's parameters on every hop of the gateway.
			if strings.HasPrefix(u, e.base) {
				q := r.URL.Query()
				q.Set("next", "https://evil.example/")
				q.Set("redirect_uri", "https://evil.example/")
				r.URL.RawQuery = q.Encode()
			}
			return nil
		}
		resp, err := hc.Get(link + "&next=https://evil.example/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Signed in") || len(hops) < 5 {
			t.Fatalf("alice's sign-in: %d %q after %v", resp.StatusCode, body, hops)
		}
		if got, err := whoamiText(ctx, alice); err != nil || e.userOfUp(t, got) != "alice" {
			t.Fatalf("alice's call: %q %v", got, err)
		}
	})
	t.Run("a failed completion", func(t *testing.T) {
		// The upstream's token endpoint refuses the code: the page says the
		// sign-in did not complete, and nothing of the gateway's inside
		// (the token endpoint, the store) reaches the browser.
		b := newBrowser(t, "dave")
		hc := *b.hc
		hc.CheckRedirect = func(r *http.Request, via []*http.Request) error {
			if strings.HasPrefix(r.URL.String(), e.base+"/oauth/callback") {
				q := r.URL.Query()
				q.Set("code", "not-a-code")
				r.URL.RawQuery = q.Encode()
			}
			return nil
		}
		dave := e.sdkClient(t, ctx, e.token(t, "dave"), true)
		link, _ := e.askedLink(t, ctx, dave)
		resp, err := hc.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "did not complete") {
			t.Fatalf("a refused code: %d %q", resp.StatusCode, body)
		}
		for _, inside := range []string{e.upAS.URL, "127.0.0.1"} {
			if strings.Contains(string(body), inside) {
				t.Errorf("the page shows %q: %q", inside, body)
			}
		}
	})
	t.Run("bad parameters", func(t *testing.T) {
		huge := strings.Repeat("A", 512<<10)
		for _, u := range []string{
			e.base + "/oauth/start?t=" + huge,
			e.base + "/oauth/start?t=" + huge[:9000],
			e.base + "/oauth/start?t=%zz",
			e.base + "/oauth/start?t=" + url.QueryEscape(link[strings.Index(link, "t=")+2:]+"x"),
			e.base + "/oauth/start",
			e.base + "/oauth/login?state=" + huge[:9000] + "&code=x",
			e.base + "/oauth/login?state=&code=&error=" + huge[:4000],
			e.base + "/oauth/callback?state=" + huge[:5000] + "&code=x",
			e.base + "/oauth/callback?state=a&state=b&code=x&code=y",
			e.base + "/oauth/nothing",
		} {
			start := time.Now()
			resp := raw(http.MethodGet, u, "", nil)
			if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.Header.Get("Location") != "" || time.Since(start) > 5*time.Second {
				t.Errorf("%.80s: %d, Location %q, in %v", u, resp.StatusCode, resp.Header.Get("Location"), time.Since(start))
			}
		}
		if resp := raw(http.MethodPost, link, "", nil); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d", resp.StatusCode)
		}
		// The gateway still serves.
		if _, err := whoamiText(ctx, alice); err != nil {
			t.Fatalf("after the bad requests: %v", err)
		}
	})
	t.Run("cookies", func(t *testing.T) {
		cLink, _ := e.askedLink(t, ctx, e.sdkClient(t, ctx, e.token(t, "carol"), true))
		b := newBrowser(t, "carol")
		hc := *b.hc
		var set []*http.Cookie
		hc.CheckRedirect = func(r *http.Request, via []*http.Request) error {
			if r.Response != nil {
				set = append(set, r.Response.Cookies()...)
			}
			return nil
		}
		resp, err := hc.Get(cLink)
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, resp.Cookies()...)
		resp.Body.Close()
		if len(set) < 3 {
			t.Fatalf("the pages set %d cookies", len(set))
		}
		for _, c := range set {
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/oauth/" || c.Domain != "" || c.MaxAge > 600 {
				t.Errorf("cookie %s: HttpOnly %t, SameSite %v, Path %q, Domain %q, MaxAge %d", c.Name, c.HttpOnly, c.SameSite, c.Path, c.Domain, c.MaxAge)
			}
		}
	})
	for _, s := range []string{upSecret, loginSecret} {
		if strings.Contains(e.logs.String(), s) {
			t.Fatal("a secret is in the logs")
		}
	}
}
