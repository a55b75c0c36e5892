package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
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
	_, err = whoamiText(ctx, mallory)
	mLink, _ := signInURLError(t, err)

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
