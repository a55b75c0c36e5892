package mcpadapter_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// stdioServer returns the Command running the test server binary.
func stdioServer(t *testing.T, flags ...string) mcpadapter.Command {
	return mcpadapter.Command{Path: testserver.Build(t), Args: flags}
}

func TestStdioBothEras(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			a, err := mcpadapter.New(stdioServer(t, "-era", e.era.String()), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tools := toolMap(t, ctx, a)
			info, err := a.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if si := info.Servers[0]; si.Era != e.want || si.ProtocolVersion != e.version || si.Transport != "stdio" {
				t.Errorf("info %+v", si)
			}
			if got := mustCall(t, ctx, tools["echo"], `{"text":"over stdio"}`).Text(); got != "over stdio" {
				t.Errorf("echo: %q", got)
			}
			if string(tools["schema"].InputSchema) != testserver.SchemaInput {
				t.Errorf("schema not verbatim over stdio: %s", tools["schema"].InputSchema)
			}
		})
	}
}

func TestHTTPTransports(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		url     func(t *testing.T, srv *testserver.Options) string
		era     testserver.Era
		want    mcpadapter.Era
		version string
		kind    string
	}{
		{"streamable-modern-stateless", func(t *testing.T, o *testserver.Options) string {
			return testserver.ServeStreamable(t, testserver.New(*o), testserver.Stateless())
		}, testserver.Modern, mcpadapter.EraDiscover, "2026-07-28", "streamable-http"},
		{"streamable-legacy-sessions", func(t *testing.T, o *testserver.Options) string {
			return testserver.ServeStreamable(t, testserver.New(*o))
		}, testserver.Legacy, mcpadapter.EraHandshake, "2025-11-25", "streamable-http"},
		{"sse", func(t *testing.T, o *testserver.Options) string {
			return testserver.ServeSSE(t, testserver.New(*o))
		}, testserver.Legacy, mcpadapter.EraHandshake, "2025-11-25", "sse"},
		{"sse-found-by-fallback", func(t *testing.T, o *testserver.Options) string {
			// A legacy SSE server at a path not ending in /sse: the client
			// tries streamable HTTP first, then falls back.
			s := testserver.StartSSE(t, testserver.New(*o))
			return strings.TrimSuffix(s.URL, "/sse") + "/sse?via=fallback"
		}, testserver.Legacy, mcpadapter.EraHandshake, "2025-11-25", "sse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			url := tc.url(t, &testserver.Options{Era: tc.era})
			a, err := mcpadapter.New(url, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tools := toolMap(t, ctx, a)
			info, err := a.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if si := info.Servers[0]; si.Era != tc.want || si.ProtocolVersion != tc.version || si.Transport != tc.kind {
				t.Errorf("info %+v", si)
			}
			if got := mustCall(t, ctx, tools["echo"], `{"text":"over http"}`).Text(); got != "over http" {
				t.Errorf("echo: %q", got)
			}
			if string(tools["schema"].InputSchema) != testserver.SchemaInput {
				t.Errorf("schema not verbatim: %s", tools["schema"].InputSchema)
			}
		})
	}
}

func TestHTTPHeadersAndAuth(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, state := testserver.NewWithState(testserver.Options{})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
		Headers: map[string]string{"X-Tenant": "acme"},
		Auth:    mcpadapter.BearerToken("t0k3n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "headers", nil, nil); err != nil {
		t.Fatal(err)
	}
	h := state.LastHeaders("headers")
	if h.Get("X-Tenant") != "acme" || h.Get("Authorization") != "Bearer t0k3n" {
		t.Errorf("server saw headers %v", h)
	}
}

func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	hs := testserver.StartStreamable(t, srv)
	a, err := mcpadapter.New(hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	echo := toolMap(t, ctx, a)["echo"]
	mustCall(t, ctx, echo, `{"text":"one"}`)
	hs.ExpireSessions()
	// The old session answers 404: the call is retried on a new session.
	if got := mustCall(t, ctx, echo, `{"text":"two"}`).Text(); got != "two" {
		t.Errorf("after expiry: %q", got)
	}
	if n := len(hs.SessionIDs()); n < 2 {
		t.Errorf("server saw %d sessions, want a new one after expiry", n)
	}
	if state.Calls("echo") != 2 {
		t.Errorf("server ran echo %d times, want 2", state.Calls("echo"))
	}
}

// syncBuffer is a goroutine-safe log sink.
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

func TestTraceRedacted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) any
	}{
		{"stdio", func(t *testing.T) any { return stdioServer(t) }},
		{"in-process", func(t *testing.T) any { return testserver.New(testserver.Options{}) }},
		{"streamable", func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
		}},
		{"sse", func(t *testing.T) any { return testserver.ServeSSE(t, testserver.New(testserver.Options{})) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			var logs syncBuffer
			opts := mcpadapter.ClientOptions{
				Name:   "traced",
				Trace:  true,
				Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			}
			if tc.name == "streamable" || tc.name == "sse" {
				opts.Auth = mcpadapter.BearerToken("header-secret")
			}
			c, err := mcpadapter.NewClient(tc.target(t), &opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"Bearer abc123","token":"s3cret"}`), nil); err != nil {
				t.Fatal(err)
			}
			out := logs.String()
			for _, want := range []string{`"server":"traced"`, `mcp send`, `mcp recv`, `tools/call`, `isError`} {
				if !strings.Contains(out, want) {
					t.Errorf("trace lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(out, "server/discover") && !strings.Contains(out, "initialize") {
				t.Errorf("trace lacks the handshake:\n%s", out)
			}
			for _, secret := range []string{"s3cret", "abc123", "header-secret"} {
				if strings.Contains(out, secret) {
					t.Errorf("trace leaks %q:\n%s", secret, out)
				}
			}
		})
	}
}
