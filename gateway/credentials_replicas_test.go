package gateway_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExchangeReplicas: two replicas sharing their handshake-era sessions
// (Options.Sessions) behind a balancer with no affinity: alice's and
// bob's sessions, made on one replica and made again on the other, send
// each of their calls with a token exchanged for their own principal,
// whichever replica takes it.
func TestExchangeReplicas(t *testing.T) {
	as := testauth.Start(t, testauth.Options{MCP: whoami(), JWT: true, ClientID: xchgClient, ClientSecret: xchgSecret,
		NoRegistration: true, NoPKCE: true, TokenExchange: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := "http://" + ln.Addr().String() + "/mcp"
	store := &gateway.MemorySessionStore{}
	log := slog.New(slog.NewTextHandler(&lockedBuffer{}, nil))
	var backends []*url.URL
	var hits [2]atomic.Int64
	for i := range 2 {
		gw, err := gateway.New([]gateway.Server{{Name: "up", Target: as.MCPURL, Exchange: &mcpadapter.TokenExchange{
			Issuer: as.URL, ClientID: xchgClient, ClientSecret: xchgSecret, Scopes: []string{testauth.BaseScope}}}},
			&gateway.Options{Logger: log, Prefix: mcpadapter.PrefixAlways, Sessions: &gateway.SessionOptions{Store: store}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = gw.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = gw.Start(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		guard, err := resourceserver.New(&resourceserver.Options{Resource: front, Issuers: []string{as.URL}, Scopes: []string{testauth.BaseScope}, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		h := guard.Handler(gw)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		u, _ := url.Parse(ts.URL)
		backends = append(backends, u)
	}
	var next atomic.Int64
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(backends[next.Add(1)%2])
		pr.Out.Host = pr.In.Host // the Guard's resource is the front's URL
	}}
	// The proxy reads the body's end while the replica's event stream
	// goes out: net/http must not close it when the header is written.
	fs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		proxy.ServeHTTP(w, r)
	}))
	fs.Listener.Close()
	fs.Listener = ln
	fs.Start()
	t.Cleanup(fs.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := &xchgEnv{as: as, url: front}
	users := []string{"alice", "bob"}
	var wg sync.WaitGroup
	for _, user := range users {
		cs := e.sdkClient(t, ctx, e.token(t, user))
		wg.Go(func() {
			for range 6 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
				if err != nil {
					t.Errorf("%s: %v", user, err)
					return
				}
				text, err := resultText(res)
				if err != nil {
					t.Errorf("%s: %v", user, err)
					return
				}
				if got := userAt(as, text); got != user {
					t.Errorf("%s's call reached the server as %q", user, got)
				}
			}
		})
	}
	wg.Wait()
	if hits[0].Load() == 0 || hits[1].Load() == 0 {
		t.Fatalf("the replicas took %d and %d requests: both must", hits[0].Load(), hits[1].Load())
	}
}

// userAt returns the user whose token the authorization server's MCP
// endpoint saw as authz, or "".
func userAt(as *testauth.Server, authz string) string {
	for _, r := range as.Requests() {
		if r.Authorization == authz && authz != "" {
			return r.User
		}
	}
	return ""
}
