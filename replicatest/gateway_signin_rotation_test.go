package replicatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
)

// tokensWithKey opens the token store of kind at url sealed with key.
func tokensWithKey(t *testing.T, kind, url string, key []byte) mcpadapter.TokenStore {
	t.Helper()
	if kind == "redis" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opts)
		t.Cleanup(func() { _ = rdb.Close() })
		s, err := redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgstore.NewTokenStore(context.Background(), pool, &pgstore.TokenOptions{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGatewaySignInKeyRotation: alice signs in through a gateway whose
// token store is sealed with one key; the gateway is replaced by one
// with another sign-in key (and so another store key, as serve derives
// it), on the same store. Her token, sealed with the old key, cannot be
// read: she is asked to sign in again (not refused for good), her new
// sign-in completes over the old key's record of the states used, and
// her call runs with her new token.
func TestGatewaySignInKeyRotation(t *testing.T) {
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
			var current atomic.Pointer[http.Handler]
			fs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) })}
			go func() { _ = fs.Serve(front) }()
			t.Cleanup(func() { _ = fs.Close() })
			start := func(key []byte) *gateway.Gateway {
				guard, err := resourceserver.New(&resourceserver.Options{Resource: mcpURL, Issuers: []string{gwAS.URL}, Scopes: []string{testauth.BaseScope}})
				if err != nil {
					t.Fatal(err)
				}
				gw, err := gateway.New([]gateway.Server{{Name: "up", Target: upAS.MCPURL,
					SignIn: &gateway.SignIn{Issuer: upAS.URL, ClientID: "gw", ClientSecret: "gw-s3cret", Scopes: []string{testauth.BaseScope}}}},
					&gateway.Options{SignIn: &gateway.SignInOptions{URL: base, Key: key, Store: tokensWithKey(t, kind, db.URL, key),
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
				var h http.Handler = mux
				current.Store(&h)
				return gw
			}
			tok, err := gwAS.SignToken(map[string]any{"sub": "alice", "aud": mcpURL, "scope": testauth.BaseScope, "client_id": "app"})
			if err != nil {
				t.Fatal(err)
			}
			connect := func() *mcp.ClientSession {
				c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}})
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL,
					HTTPClient: &http.Client{Transport: headerRT{"Authorization", "Bearer " + tok}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				return cs
			}
			call := func(cs *mcp.ClientSession) (string, error) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
				if err != nil {
					return "", err
				}
				return res.Content[0].(*mcp.TextContent).Text, nil
			}
			// signIn makes alice's call, which must ask her to sign in,
			// and completes the sign-in in her browser.
			signIn := func(cs *mcp.ClientSession) {
				t.Helper()
				_, err := call(cs)
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired {
					t.Fatalf("alice's call: want -32042 (sign in), got %v", err)
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
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Signed in") {
					t.Fatalf("alice's sign-in ended with %d %q", resp.StatusCode, body)
				}
			}

			old := start(bytes.Repeat([]byte{1}, 32))
			cs := connect()
			signIn(cs)
			first, err := call(cs)
			if err != nil {
				t.Fatalf("alice's call after signing in: %v", err)
			}
			_ = old.Close()

			start(bytes.Repeat([]byte{2}, 32))
			cs = connect()
			signIn(cs)
			second, err := call(cs)
			if err != nil {
				t.Fatalf("alice's call after signing in again under the new key: %v", err)
			}
			if second == first {
				t.Fatal("alice's call under the new key went with the token of her first sign-in")
			}
			for _, r := range upAS.Requests() {
				if r.Authorization == second && r.User != "alice" {
					t.Fatalf("alice's call went with %q's token", r.User)
				}
			}
		})
	}
}
