package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestServe: `mcpadapter serve` prints where it listens, each server with
// its protocol version (and a server that is down with why); the CLI's
// own tools and inspect work against it as against any server; SIGTERM
// ends it cleanly.
func TestServe(t *testing.T) {
	alpha := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	beta := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "beta", Era: testserver.Legacy}))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	doc := fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}, "beta": {"url": %q}, "gone": {"command": "/nonexistent/server"}}}`, alpha.URL, beta.URL)
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	p := startServe(t, dir, nil, "--config", cfg, "--listen", "127.0.0.1:0", "--audit-log", audit)
	url, out := p.URL, p.stdout.String()
	for _, want := range []string{"3 servers", "alpha", "2026-07-28", "beta", "2025-11-25", "gone", "DOWN"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve printed no %q:\n%s", want, out)
		}
	}
	cli(t, "", "tools", url).Must(t, 0, []string{"alpha_echo", "beta_echo", "beta_book"}, nil)
	cli(t, "", "inspect", url).Must(t, 0, []string{"mcpadapter-gateway", "2026-07-28"}, nil)
	client := t.TempDir()
	if err := os.WriteFile(filepath.Join(client, ".mcp.json"), []byte(fmt.Sprintf(`{"mcpServers": {"gw": {"url": %q}}}`, url)), 0o600); err != nil {
		t.Fatal(err)
	}
	cliIn(t, client, "", "call", "beta_echo", `{"text":"through the gateway"}`).Must(t, 0, []string{"through the gateway"}, nil)
	if data, err := os.ReadFile(audit); err != nil || !strings.Contains(string(data), `"tool":"beta_echo","server":"beta","server_tool":"echo","outcome":"ok"`) {
		t.Errorf("the audit log after a call: %v\n%s", err, data)
	}
	base := strings.TrimSuffix(url, "/mcp")
	for path, want := range map[string]string{"/healthz": `"alive":true`, "/readyz": `"ready":true`} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}

	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, p.stderr)
	}
	if out := p.stdout.String(); !strings.Contains(out, "shutting down") {
		t.Errorf("serve said nothing of shutting down:\n%s", out)
	}
}
