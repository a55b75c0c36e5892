package replicatest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestWebSignInReplicas: two replicas of a web service share a token
// store (Redis, PostgreSQL) and a state key. A user's sign-in starts on
// one (the call that needs it) and its callback lands on the other; both
// then send that user's token. The state is used once, whichever replica
// sees it again. With tokens that are always due for a refresh, both
// replicas refresh the user's token at once, many times over: the
// authorization server, which revokes a rotated refresh token's whole
// family when it is presented again, sees no refresh token twice.
func TestWebSignInReplicas(t *testing.T) {
	for _, kind := range []string{"redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			db := startDB(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// Tokens live 8s at the server; oauth2 refreshes them 10s
			// before they expire, so every request refreshes.
			as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: "s3cret",
				NoRegistration: true, ReuseDetection: true, TokenTTL: 8 * time.Second})
			key := []byte("0123456789abcdef0123456789abcdef")
			var replicas [2]struct {
				signIn *mcpadapter.WebSignIn
				client *mcpadapter.Client
				app    *httptest.Server
			}
			for i := range replicas {
				r := &replicas[i]
				var signIn *mcpadapter.WebSignIn
				r.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if err := signIn.Complete(req.Context(), req.Header.Get("X-App-User"), req.URL.Query()); err != nil {
						http.Error(w, err.Error(), http.StatusBadRequest)
					}
				}))
				t.Cleanup(r.app.Close)
				s := mustOpen(t, kind, db.URL)
				var err error
				signIn, err = mcpadapter.NewWebSignIn(&mcpadapter.WebSignInOptions{Issuer: as.URL, ClientID: "webapp", ClientSecret: "s3cret",
					RedirectURL: "https://app.example/callback", StateKey: key, Store: s.tokens})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(signIn.Close)
				r.signIn = signIn
				if r.client, err = mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Auth: signIn}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = r.client.Close() })
			}
			alice := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "alice"})
			echo := func(c *mcpadapter.Client) error {
				_, err := c.CallTool(alice, "echo", json.RawMessage(`{"text":"hi"}`), nil)
				return err
			}

			// The sign-in starts on replica 0; the browser comes back to
			// the service's redirect URL, which the load balancer sends
			// to replica 1.
			var sr *mcpadapter.SignInRequiredError
			if err := echo(replicas[0].client); !errors.As(err, &sr) {
				t.Fatalf("alice's first call: %v; want a *SignInRequiredError", err)
			}
			back, err := testauth.Authorize(sr.URL, "alice")
			if err != nil {
				t.Fatal(err)
			}
			back.Scheme, back.Host = "http", appHost(t, replicas[1].app.URL)
			callback := func() (int, string) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, back.String(), nil)
				req.Header.Set("X-App-User", "alice")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if code, body := callback(); code != http.StatusOK {
				t.Fatalf("the callback on replica 1: %d %s", code, body)
			}
			if code, _ := callback(); code != http.StatusBadRequest {
				t.Errorf("the same callback again: %d; want 400", code)
			}
			back.Host = appHost(t, replicas[0].app.URL)
			if code, _ := callback(); code != http.StatusBadRequest {
				t.Errorf("the same callback on replica 0: %d; want 400", code)
			}

			// Both replicas at once, each request refreshing the token.
			var wg sync.WaitGroup
			for i := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 3 {
						if err := echo(replicas[i%2].client); err != nil {
							t.Errorf("replica %d: %v", i%2, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			c := as.Counts()
			if c.RefreshReuses != 0 || c.Refreshes < 2 || c.CodeExchanges != 1 || c.Authorizations != 1 {
				t.Errorf("authorization server counts %+v: want refreshes, none reused, one sign-in", c)
			}
			for _, r := range as.Requests() {
				if r.Authorization != "" && r.User != "alice" {
					t.Errorf("a request carried a token that is not alice's (%q)", r.User)
				}
			}
		})
	}
}

// appHost is the host of an app's URL.
func appHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestWebSignInCallbackRace: one callback presented to four replicas at
// once (a browser's retries through a load balancer, a replayed link):
// one completes it, the others refuse it, and the code is sent to the
// token endpoint once.
func TestWebSignInCallbackRace(t *testing.T) {
	for _, kind := range []string{"redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			db := startDB(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: "s3cret", NoRegistration: true})
			key := []byte("0123456789abcdef0123456789abcdef")
			var signIns [4]*mcpadapter.WebSignIn
			for i := range signIns {
				s, err := mcpadapter.NewWebSignIn(&mcpadapter.WebSignInOptions{Issuer: as.URL, ClientID: "webapp", ClientSecret: "s3cret",
					RedirectURL: "https://app.example/callback", StateKey: key, Store: mustOpen(t, kind, db.URL).tokens})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.Close)
				signIns[i] = s
			}
			c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Auth: signIns[0]})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			alice := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "alice"})
			_, err = c.CallTool(alice, "echo", json.RawMessage(`{"text":"hi"}`), nil)
			var sr *mcpadapter.SignInRequiredError
			if !errors.As(err, &sr) {
				t.Fatalf("alice's first call: %v; want a *SignInRequiredError", err)
			}
			back, err := testauth.Authorize(sr.URL, "alice")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, len(signIns))
			for i, s := range signIns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = s.Complete(ctx, "alice", back.Query())
				}()
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
				}
			}
			if ok != 1 {
				t.Errorf("%d replicas completed the one callback (errors %v); want one", ok, errs)
			}
			sent := 0
			for _, f := range as.TokenRequests() {
				if f.Get("grant_type") == "authorization_code" {
					sent++
				}
			}
			if sent != 1 {
				t.Errorf("the code was sent to the token endpoint %d times; want once", sent)
			}
			if _, err := c.CallTool(alice, "echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
				t.Errorf("alice's call after the sign-in: %v", err)
			}
		})
	}
}
