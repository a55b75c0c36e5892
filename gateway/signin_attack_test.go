package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stillAsks checks that cs's call still asks its principal to sign in:
// nothing got stored for it.
func stillAsks(t *testing.T, ctx context.Context, cs *mcp.ClientSession, who string) {
	t.Helper()
	if got, err := whoamiText(ctx, cs); err == nil {
		t.Fatalf("%s's call ran with a token (%q): someone's sign-in was stored for them", who, got)
	}
}

// TestSignInConfusedDeputy plays mallory, a user of the gateway, against
// alice, another (the spec's URL-mode elicitation phishing, both ways):
// mallory's link opened in alice's browser; the authorization URL behind
// it, taken out of mallory's own browser, opened in alice's; mallory's
// finished callback (her code) opened in alice's browser; mallory's
// login at the gateway's pages opened in alice's; a forged and a
// replayed callback. None signs anyone in with someone else's account:
// alice's upstream token is never stored under mallory, nor mallory's
// under alice, and the upstream never sees a token of alice's sign-in.
func TestSignInConfusedDeputy(t *testing.T) {
	e := startSignIn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mallory := e.sdkClient(t, ctx, e.token(t, "mallory"), true)
	alice := e.sdkClient(t, ctx, e.token(t, "alice"), true)
	mLink, _ := e.askedLink(t, ctx, mallory)
	upAuthorize := func(u *url.URL) bool { return strings.HasPrefix(u.String(), e.upAS.URL+"/authorize") }
	gwLogin := func(u *url.URL) bool { return strings.HasPrefix(u.String(), e.base+"/oauth/login") }
	callback := func(u *url.URL) bool { return strings.HasPrefix(u.String(), e.base+"/oauth/callback") }

	t.Run("link sent to another user", func(t *testing.T) {
		// A fresh browser: alice signs in at the gateway's pages, and is
		// not mallory.
		status, text := newBrowser(t, "alice").open(t, mLink)
		if status != http.StatusForbidden || !strings.Contains(text, "another user") {
			t.Fatalf("mallory's link in alice's browser: %d %q", status, text)
		}
		// alice's browser already signed in at the pages: the same.
		ab := newBrowser(t, "alice")
		aLink, _ := e.askedLink(t, ctx, alice)
		ab.until(t, aLink, upAuthorize) // signed in at the pages as alice
		if status, _ := ab.open(t, mLink); status != http.StatusForbidden {
			t.Fatalf("mallory's link in alice's signed-in browser: %d", status)
		}
	})
	t.Run("authorization URL sent to another user", func(t *testing.T) {
		mb := newBrowser(t, "mallory")
		authURL := mb.until(t, mLink, upAuthorize)
		// alice's browser with no session at the pages.
		if status, _ := newBrowser(t, "alice").open(t, authURL); status != http.StatusUnauthorized {
			t.Fatalf("mallory's authorization URL in a browser with no session: %d", status)
		}
		// alice's browser signed in at the pages as alice, with her own
		// sign-in under way.
		ab := newBrowser(t, "alice")
		aLink, _ := e.askedLink(t, ctx, alice)
		ab.until(t, aLink, upAuthorize)
		if status, _ := ab.open(t, authURL); status != http.StatusForbidden {
			t.Fatalf("mallory's authorization URL in alice's browser: %d", status)
		}
	})
	t.Run("callback sent to another user", func(t *testing.T) {
		mb := newBrowser(t, "mallory")
		link, _ := e.askedLink(t, ctx, mallory)
		cb := mb.until(t, link, callback) // mallory's code, for mallory's state
		ab := newBrowser(t, "alice")
		aLink, _ := e.askedLink(t, ctx, alice)
		ab.until(t, aLink, callback) // alice's own sign-in, up to its callback
		if status, _ := ab.open(t, cb); status != http.StatusForbidden {
			t.Fatalf("mallory's callback in alice's browser: %d", status)
		}
	})
	t.Run("login sent to another user", func(t *testing.T) {
		mb := newBrowser(t, "mallory")
		login := mb.until(t, mLink, gwLogin) // mallory's code at the gateway's authorization server
		ab := newBrowser(t, "alice")
		if status, _ := ab.open(t, login); status != http.StatusForbidden {
			t.Fatalf("mallory's login in alice's browser: %d", status)
		}
		u, _ := url.Parse(e.base + "/oauth/")
		for _, c := range ab.hc.Jar.Cookies(u) {
			if c.Name == "mcpgw_user" {
				t.Fatal("alice's browser got a session at the pages from mallory's login")
			}
		}
	})
	t.Run("forged and replayed callback", func(t *testing.T) {
		ab := newBrowser(t, "alice")
		aLink, _ := e.askedLink(t, ctx, alice)
		cb := ab.until(t, aLink, callback)
		forged, _ := url.Parse(cb)
		q := forged.Query()
		q.Set("state", q.Get("state")[:len(q.Get("state"))-2]+"AA")
		forged.RawQuery = q.Encode()
		if status, _ := ab.open(t, forged.String()); status != http.StatusForbidden {
			t.Fatalf("an altered state: %d", status)
		}
		// The cookie of the sign-in, kept: the callback goes through
		// once only.
		u, _ := url.Parse(e.base + "/oauth/")
		kept := ab.hc.Jar.Cookies(u)
		ab.signIn(t, cb)
		ab.hc.Jar.SetCookies(u, kept)
		if status, text := ab.open(t, cb); status != http.StatusBadRequest || !strings.Contains(text, "already") {
			t.Fatalf("a replayed callback: %d %q", status, text)
		}
	})
	stillAsks(t, ctx, mallory, "mallory")
	for _, r := range e.upAS.Requests() {
		if r.User == "mallory" {
			t.Fatal("the upstream got a request with mallory's token")
		}
	}
	got, err := whoamiText(ctx, alice)
	if err != nil || e.userOfUp(t, got) != "alice" {
		t.Fatalf("alice's call after her own sign-in: %q %v", got, err)
	}
}

// TestSignInHostileServer: a server that names another authorization
// server in its metadata gets no sign-in: its principal's call fails, the
// other authorization server gets no request (no client secret, no code,
// no user), and neither secret is in the errors or logs.
func TestSignInHostileServer(t *testing.T) {
	var evilMu sync.Mutex
	var evilSaw []string
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evilMu.Lock()
		evilSaw = append(evilSaw, r.Method+" "+r.URL.String())
		evilMu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(evil.Close)
	var hostileURL string
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil)
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" || r.URL.Path == "/.well-known/oauth-protected-resource" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, hostileURL, evil.URL)
			return
		}
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+strings.TrimSuffix(hostileURL, "/mcp")+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r) // the gateway's own token, for listings
	}))
	t.Cleanup(hostile.Close) // after the gateway's Close
	hostileURL = hostile.URL + "/mcp"
	ln, base := listen(t)
	e := &signInEnv{url: base + "/mcp", base: base, logs: &lockedBuffer{}}
	e.gwAS = startGatewayAS(t, e.url)
	e.upAS = startUpAS(t)
	servers := []gateway.Server{{Name: "up", SignIn: &gateway.SignIn{Issuer: e.upAS.URL, ClientID: upClient, ClientSecret: upSecret}, Target: hostileURL}}
	e.gw = signInGateway(t, ln, base, e.gwAS, servers, []byte("0123456789abcdef0123456789abcdef"), nil, e.logs)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := e.sdkClient(t, ctx, e.token(t, "bob"), true)
	_, err := whoamiText(ctx, cs)
	if err == nil {
		t.Fatal("the call ran")
	}
	if !strings.Contains(e.logs.String(), "names the authorization server "+evil.URL) {
		t.Fatal("the gateway's log does not say why the sign-in was refused")
	}
	evilMu.Lock()
	defer evilMu.Unlock()
	if len(evilSaw) > 0 {
		t.Fatalf("the other authorization server got requests: %v", evilSaw)
	}
	for _, s := range []string{upSecret, loginSecret} {
		if strings.Contains(err.Error(), s) || strings.Contains(e.logs.String(), s) {
			t.Fatal("a secret is in the error or the logs")
		}
	}
}
