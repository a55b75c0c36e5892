package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions clients of the tests speak.
const (
	v0618 = "2025-06-18"
	v1125 = "2025-11-25"
	v0728 = "2026-07-28"
)

var clientVersions = []string{v0618, v1125, v0728}

// testCtx returns a context that ends with the test or after d.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// quietLogger discards logs unless the test is verbose.
func quietLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// startGateway starts a gateway for servers, served over HTTP on
// 127.0.0.1; it is closed when the test ends.
func startGateway(t testing.TB, servers []Server, opts *Options) (*Gateway, string) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger(t)
	}
	g, err := New(servers, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(ts.Close)
	return g, ts.URL + "/mcp"
}

// connect connects a go-sdk client of protocol version v to url.
func connect(t testing.TB, url, v string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(testCtx(t, 30*time.Second), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("connect at %s: %v", v, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// texts joins the text content of a result.
func texts(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// toolNames lists the tools a session sees.
func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(testCtx(t, 10*time.Second), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// events records a gateway's events.
type events struct {
	mu  sync.Mutex
	all []Event
	ch  chan struct{}
}

func newEvents() *events { return &events{ch: make(chan struct{}, 1000)} }

func (e *events) add(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	select {
	case e.ch <- struct{}{}:
	default:
	}
}

// waitFor waits until an event matches, or fails the test.
func (e *events) waitFor(t testing.TB, what string, match func(Event) bool) Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		e.mu.Lock()
		for _, ev := range e.all {
			if match(ev) {
				e.mu.Unlock()
				return ev
			}
		}
		e.mu.Unlock()
		select {
		case <-e.ch:
		case <-deadline:
			t.Fatalf("no event: %s; got %v", what, e.all)
		}
	}
}

// startForPrincipals starts a gateway for servers behind a bearer-token
// guard whose token names the principal (any of who; any token when who
// is empty); it returns the gateway and its endpoint.
func startForPrincipals(t *testing.T, servers []Server, opts *Options, who ...string) (*Gateway, string) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger(t)
	}
	g, err := New(servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if len(who) > 0 && !slices.Contains(who, token) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(g))
	t.Cleanup(ts.Close)
	return g, ts.URL + "/mcp"
}
