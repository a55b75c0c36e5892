package gateway

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamSessionExpires: a server that forgets the gateway's session
// (restarted, or expired it) is reconnected to; no client sees the
// difference.
func TestUpstreamSessionExpires(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{Prefix: mcpadapter.PrefixNever})
	cs := connect(t, url, v1125, nil)
	for i := range 3 {
		res, err := cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
		if err != nil || texts(res) != fmt.Sprint(i) {
			t.Fatalf("call %d: %q, %v", i, texts(res), err)
		}
		srv.ExpireSessions()
	}
	if n := len(srv.SessionIDs()); n < 3 {
		t.Errorf("the server saw %d sessions, want a new one after each expiry", n)
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger and a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSecretsNeverShown: the secrets of a config (a token in a URL, an
// Authorization header) appear in no answer to a client, no log line
// (protocol trace included) and no event, whether the server is down or
// refuses the credential.
func TestSecretsNeverShown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	guarded := httptest.NewServer(testserver.RequireBearer(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{}) }, nil), "the-right-token"))
	t.Cleanup(guarded.Close)
	doc := fmt.Sprintf(`{"mcpServers": {
		"down": {"url": "http://%s/mcp?api_key=SECRET-IN-QUERY", "headers": {"Authorization": "Bearer SECRET-IN-HEADER"}},
		"refusing": {"url": %q, "headers": {"Authorization": "Bearer SECRET-WRONG-TOKEN", "X-Api-Key": "SECRET-API-KEY"}},
		"ok": {"url": %q}
	}}`, closed, guarded.URL+"/mcp?token=SECRET-TOKEN-QUERY", testserver.StartStreamable(t, testserver.New(testserver.Options{})).URL)
	cfg, err := mcpadapter.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	var evs []string
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, url := startGateway(t, FromConfig(cfg), &Options{
		Logger: logger,
		Client: &mcpadapter.ClientOptions{Trace: true, Logger: logger},
		OnEvent: func(e Event) {
			mu.Lock()
			evs = append(evs, fmt.Sprint(e.Kind, e.Server, e.Err))
			mu.Unlock()
		},
	})
	var answers []string
	for _, v := range []string{v1125, v0728} {
		cs := connect(t, url, v, nil)
		for _, name := range []string{"down_echo", "refusing_echo", "nope"} {
			_, err := cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
			answers = append(answers, fmt.Sprint(err))
		}
		res, err := cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "ok_echo", Arguments: map[string]any{"text": "fine"}})
		if err != nil || texts(res) != "fine" {
			t.Fatalf("ok_echo: %q, %v", texts(res), err)
		}
	}
	for _, s := range g.Servers() {
		answers = append(answers, fmt.Sprint(s.Err))
	}
	mu.Lock()
	all := logs.String() + strings.Join(evs, "\n") + strings.Join(answers, "\n")
	mu.Unlock()
	if !strings.Contains(all, `"down"`) && !strings.Contains(all, "server=down") {
		t.Fatalf("nothing says the server is down:\n%s", all)
	}
	for _, secret := range []string{"SECRET-IN-QUERY", "SECRET-IN-HEADER", "SECRET-WRONG-TOKEN", "SECRET-API-KEY", "SECRET-TOKEN-QUERY"} {
		if i := strings.Index(all, secret); i >= 0 {
			t.Errorf("%s shown: ...%s...", secret, all[max(0, i-200):min(len(all), i+100)])
		}
	}
}
