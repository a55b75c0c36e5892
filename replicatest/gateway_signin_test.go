package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// authzEcho is an MCP server whose tool answers with the Authorization
// header it was sent.
func authzEcho() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.GetExtra().Header.Get("Authorization")}}}, nil
		})
	return s
}

type headerRT struct{ k, v string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}

// TestGatewaySignInReplicas: two gateway replicas share a token store
// and the sign-in key, behind one address for browsers whose balancer
// sends the start and login pages to one and the callback to the other.
// alice's call on replica 0 asks her mid-call and waits; her sign-in
// completes on replica 1, and replica 0 learns it from the store: the
// call runs with her own token, her session is told the sign-in
// completed, and her calls on both run with that token.
func TestGatewaySignInReplicas(t *testing.T) {
	for _, kind := range []string{"redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			db := startDB(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			front, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			base := "http://" + front.Addr().String()
			mcpURL := base + "/mcp"
			gwAS := testauth.Start(t, testauth.Options{JWT: true, UserSubject: true, ClientID: "login", ClientSecret: "login-s3cret", NoRegistration: true, Resource: mcpURL})
			upAS := testauth.Start(t, testauth.Options{MCP: authzEcho(), ClientID: "gw", ClientSecret: "gw-s3cret", NoRegistration: true})
			key := []byte("0123456789abcdef0123456789abcdef")
			var replicas [2]*httptest.Server
			for i := range replicas {
				guard, err := resourceserver.New(&resourceserver.Options{Resource: mcpURL, Issuers: []string{gwAS.URL}, Scopes: []string{testauth.BaseScope}})
				if err != nil {
					t.Fatal(err)
				}
				gw, err := gateway.New([]gateway.Server{{Name: "up", Target: upAS.MCPURL,
					SignIn: &gateway.SignIn{Issuer: upAS.URL, ClientID: "gw", ClientSecret: "gw-s3cret", Scopes: []string{testauth.BaseScope}}}},
					&gateway.Options{SignIn: &gateway.SignInOptions{URL: base, Key: key, Store: mustOpen(t, kind, db.URL).tokens,
						Login: &gateway.SignInLogin{Issuer: gwAS.URL, ClientID: "login", ClientSecret: "login-s3cret", Resource: mcpURL,
							Scopes: []string{testauth.BaseScope}, Verify: guard.Principal}}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = gw.Close() })
				if err := gw.Start(ctx); err != nil {
					t.Fatal(err)
				}
				mux := http.NewServeMux()
				mux.Handle("/oauth/", gw.SignInHandler())
				mux.Handle("/", guard.Handler(gw))
				replicas[i] = httptest.NewServer(mux)
				t.Cleanup(replicas[i].Close)
			}
			proxy := func(i int) *httputil.ReverseProxy {
				u, _ := url.Parse(replicas[i].URL)
				return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
					r.SetURL(u)
					r.Out.Host = r.In.Host // the pages check the Host browsers use
				}}
			}
			p0, p1 := proxy(0), proxy(1)
			var served [2]atomic.Int32
			fs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// The proxy reads the body's end while the replica's
				// event stream goes out (see gateway's fullDuplex).
				_ = http.NewResponseController(w).EnableFullDuplex()
				if strings.HasSuffix(r.URL.Path, "/callback") {
					served[1].Add(1)
					p1.ServeHTTP(w, r)
					return
				}
				served[0].Add(1)
				p0.ServeHTTP(w, r)
			})}
			go func() { _ = fs.Serve(front) }()
			t.Cleanup(func() { _ = fs.Close() })

			tok, err := gwAS.SignToken(map[string]any{"sub": "alice", "aud": mcpURL, "scope": testauth.BaseScope, "client_id": "app"})
			if err != nil {
				t.Fatal(err)
			}
			jar, _ := cookiejar.New(nil)
			browser := &http.Client{Jar: jar, Transport: headerRT{testauth.UserHeader, "alice"}}
			// alice's client accepts the question at once; her browser
			// signs in afterwards (the callback on replica 1), out of
			// band, as a real client's user does.
			var wg sync.WaitGroup
			defer wg.Wait()
			signedIn := make(chan error, 1)
			var asked, completed atomic.Int32
			var sessions [2]*mcp.ClientSession
			for i, r := range replicas {
				c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						wg.Add(1)
						go func() {
							defer wg.Done()
							time.Sleep(300 * time.Millisecond)
							signedIn <- visit(browser, req.Params.URL)
						}()
						return &mcp.ElicitResult{Action: "accept"}, nil
					},
					ElicitationCompleteHandler: func(context.Context, *mcp.ElicitationCompleteNotificationRequest) { completed.Add(1) },
				})
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.URL + "/mcp",
					HTTPClient: &http.Client{Transport: headerRT{"Authorization", "Bearer " + tok}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				sessions[i] = cs
			}
			call := func(i int) (string, error) {
				res, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
				if err != nil {
					return "", err
				}
				return res.Content[0].(*mcp.TextContent).Text, nil
			}
			first, err := call(0)
			if err != nil {
				t.Fatalf("alice's call on replica 0, waiting for her sign-in: %v", err)
			}
			if err := <-signedIn; err != nil {
				t.Fatal(err)
			}
			for end := time.Now().Add(5 * time.Second); completed.Load() == 0 && time.Now().Before(end); {
				time.Sleep(20 * time.Millisecond)
			}
			if served[1].Load() != 1 || served[0].Load() < 2 || asked.Load() != 1 || completed.Load() != 1 {
				t.Fatalf("pages served by replica 0: %d, callbacks by replica 1: %d; alice asked %d times, told of %d sign-ins", served[0].Load(), served[1].Load(), asked.Load(), completed.Load())
			}
			var toks [2]string
			for i := range sessions {
				if toks[i], err = call(i); err != nil {
					t.Fatalf("alice's call on replica %d: %v", i, err)
				}
			}
			if toks[0] != toks[1] || first != toks[0] {
				t.Fatal("the replicas used different tokens of alice's one sign-in")
			}
			for _, r := range upAS.Requests() {
				if r.Authorization == toks[0] && r.User != "alice" {
					t.Fatalf("alice's calls went with %q's token", r.User)
				}
			}
			if n := upAS.Counts().CodeExchanges; n != 1 {
				t.Fatalf("%d code exchanges at the server's authorization server, want 1", n)
			}
		})
	}
}

// visit opens u in browser, following redirects, and says whether the
// last page is the end of a sign-in.
func visit(browser *http.Client, u string) error {
	resp, err := browser.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the sign-in ended with %d %q", resp.StatusCode, body)
	}
	return nil
}
