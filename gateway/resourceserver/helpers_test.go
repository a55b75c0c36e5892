package resourceserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// env is a gateway behind a Guard, in front of a real MCP server over
// HTTP that counts the calls reaching it, with a real authorization
// server (testauth) issuing its tokens.
type env struct {
	as       *testauth.Server
	url      string // the gateway's MCP endpoint, its resource URL
	guard    *resourceserver.Guard
	upstream *atomic.Int64 // tools/call and tools/list requests at the server
	// upHeaders holds the Authorization and DPoP headers of every request
	// that reached the server.
	upHeaders *syncBuffer
	logs      *syncBuffer
	gw        *gateway.Gateway
}

const (
	clientID     = "svc"
	clientSecret = "svc-secret-0123456789"
)

// setup starts the servers; asOpts and opts, if set, adjust theirs.
func setup(t testing.TB, asOpts func(*testauth.Options), opts func(*env, *resourceserver.Options)) *env {
	t.Helper()
	return setupWith(t, asOpts, opts, nil)
}

// setupWith is setup with gwOpts as the gateway's options.
func setupWith(t testing.TB, asOpts func(*testauth.Options), opts func(*env, *resourceserver.Options), gwOpts *gateway.Options) *env {
	t.Helper()
	if gwOpts == nil {
		gwOpts = &gateway.Options{}
	}
	gwOpts.Logger = quiet()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{url: "http://" + ln.Addr().String() + "/mcp", upstream: new(atomic.Int64), logs: &syncBuffer{}, upHeaders: &syncBuffer{}}
	ao := testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true, ClientID: clientID, ClientSecret: clientSecret,
		NoRegistration: true, Resource: e.url, DPoP: true}
	if asOpts != nil {
		asOpts(&ao)
	}
	e.as = testauth.Start(t, ao)

	srv := testserver.New(testserver.Options{})
	up := httptest.NewServer(countCalls(e.upstream, e.upHeaders, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(up.Close)
	gw, err := gateway.New([]gateway.Server{{Name: "up", Target: up.URL}}, gwOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	if err := gw.Start(ctxFor(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	e.gw = gw
	o := resourceserver.Options{
		Resource: e.url, Issuers: []string{e.as.URL}, Scopes: []string{testauth.BaseScope},
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if opts != nil {
		opts(e, &o)
	}
	e.guard, err = resourceserver.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(e.guard.Handler(gw))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return e
}

// countCalls counts the tools/call and tools/list requests reaching next,
// and writes the Authorization and DPoP headers of each request to headers.
func countCalls(n *atomic.Int64, headers *syncBuffer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range []string{"Authorization", "DPoP"} {
			for _, v := range r.Header.Values(h) {
				fmt.Fprintf(headers, "%s: %s\n", h, v)
			}
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) || bytes.Contains(body, []byte(`"tools/list"`)) {
				n.Add(1)
			}
		}
		next.ServeHTTP(w, r)
	})
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// callBody is a 2026-07-28 tools/call of the server's echo tool.
const callBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`

// post sends callBody to the gateway with the given headers.
func (e *env) post(t testing.TB, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(t, 20*time.Second), http.MethodPost, e.url, strings.NewReader(callBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}

// bearer returns the headers of a bearer token.
func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// token signs a token of the authorization server for the gateway, with
// claims changed by over.
func (e *env) token(t testing.TB, over map[string]any) string {
	t.Helper()
	c := map[string]any{"sub": "alice", "aud": e.url, "scope": testauth.BaseScope, "client_id": clientID}
	for k, v := range over {
		c[k] = v
	}
	tok, err := e.as.SignToken(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// mustRefuse checks that resp was refused with status and a Bearer
// challenge with code (none for ""), the gateway's metadata and scope,
// and that no call reached the server since before.
func (e *env) mustRefuse(t testing.TB, what string, resp *http.Response, status int, code string, before int64) {
	t.Helper()
	if resp.StatusCode != status {
		body, _ := io.ReadAll(resp.Body)
		t.Errorf("%s: status %d (%s), want %d", what, resp.StatusCode, bytes.TrimSpace(body), status)
	}
	ch := strings.Join(resp.Header.Values("WWW-Authenticate"), "\n")
	want := []string{`resource_metadata="` + e.guard.MetadataURL() + `"`, `scope="` + testauth.BaseScope + `"`}
	if code != "" {
		want = append(want, `error="`+code+`"`)
	}
	for _, w := range want {
		if !strings.Contains(ch, w) {
			t.Errorf("%s: challenge %q lacks %s", what, ch, w)
		}
	}
	if code == "" && strings.Contains(ch, "error=") {
		t.Errorf("%s: challenge %q has an error", what, ch)
	}
	if n := e.upstream.Load(); n != before {
		t.Errorf("%s: %d calls reached the server", what, n-before)
	}
}

// mustPass checks that resp is the echo tool's answer, and that it came
// from the server.
func (e *env) mustPass(t testing.TB, what string, resp *http.Response, before int64) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("hi")) {
		t.Fatalf("%s: status %d: %s", what, resp.StatusCode, body)
	}
	if e.upstream.Load() <= before {
		t.Fatalf("%s: the call did not reach the server", what)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// b64json is the base64url of v's JSON.
func b64json(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b64(b)
}
