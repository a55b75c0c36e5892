package replicatest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
// alice's sign-in, started by her call on replica 0, completes on
// replica 1; then her calls on both run with her own token.
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
			var sessions [2]*mcp.ClientSession
			for i, r := range replicas {
				c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}})
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
			_, err = call(0)
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired {
				t.Fatalf("want -32042, got %v", err)
			}
			var d struct {
				Elicitations []mcp.ElicitParams `json:"elicitations"`
			}
			if err := json.Unmarshal(we.Data, &d); err != nil || len(d.Elicitations) != 1 {
				t.Fatalf("data %s: %v", we.Data, err)
			}
			jar, _ := cookiejar.New(nil)
			browser := &http.Client{Jar: jar, Transport: headerRT{testauth.UserHeader, "alice"}}
			resp, err := browser.Get(d.Elicitations[0].URL)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || served[1].Load() != 1 || served[0].Load() < 2 {
				t.Fatalf("the sign-in ended with %d %q; pages served by replica 0: %d, callbacks by replica 1: %d", resp.StatusCode, body, served[0].Load(), served[1].Load())
			}
			var toks [2]string
			for i := range sessions {
				if toks[i], err = call(i); err != nil {
					t.Fatalf("alice's call on replica %d: %v", i, err)
				}
			}
			if toks[0] != toks[1] {
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
