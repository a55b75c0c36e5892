package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// post sends one JSON-RPC body to url with the headers an MCP client
// sends (and those in h), and returns the status and body.
func post(t testing.TB, url string, h map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestDNSRebindingAndOrigin: a Host that is not a loopback name (a DNS
// rebinding attack) and a foreign browser Origin are refused before
// anything reaches a server; loopback names, the gateway's own origin and
// the allowed ones pass.
func TestDNSRebindingAndOrigin(t *testing.T) {
	_, url := startGateway(t, []Server{{Name: "s", Target: testserver.New(testserver.Options{})}},
		&Options{AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"gw.internal:8443"}})
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	for _, c := range []struct {
		name string
		h    map[string]string
		want int
	}{
		{"evil host", map[string]string{"Host": "evil.example.com"}, http.StatusForbidden},
		{"evil host with loopback port", map[string]string{"Host": "evil.example.com:" + strings.Split(host, ":")[1]}, http.StatusForbidden},
		{"foreign origin", map[string]string{"Origin": "http://evil.example.com"}, http.StatusForbidden},
		{"origin with a loopback name but another port", map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"null origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"localhost", map[string]string{"Host": "localhost:" + strings.Split(host, ":")[1]}, http.StatusOK},
		{"own origin", map[string]string{"Origin": "http://" + host}, http.StatusOK},
		{"allowed origin", map[string]string{"Origin": "https://app.example.com"}, http.StatusOK},
		{"allowed host", map[string]string{"Host": "gw.internal:8443"}, http.StatusOK},
	} {
		status, body := post(t, url, c.h, initBody)
		if status != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, status, body, c.want)
		}
	}
}

// TestRequestTooLarge: a body over MaxRequestBytes is refused with 413,
// on both handlers.
func TestRequestTooLarge(t *testing.T) {
	_, url := startGateway(t, []Server{{Name: "s", Target: testserver.New(testserver.Options{})}}, &Options{MaxRequestBytes: 2000})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s_echo","arguments":{"text":"` + strings.Repeat("x", 5000) + `"}}}`
	for _, h := range []map[string]string{nil, {"Mcp-Protocol-Version": "2026-07-28"}} {
		if status, body := post(t, url, h, big); status != http.StatusRequestEntityTooLarge {
			t.Errorf("headers %v: %d %q, want 413", h, status, body)
		}
	}
}
