package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestServeResourceServer: `serve --api-key --issuer` makes the gateway an
// OAuth resource server: it says what it accepts (naming no key), answers
// a request without a credential 401 with a challenge naming its
// metadata, and serves the CLI's own tools with an API key or a JWT of the
// issuer in the Authorization header, each principal seeing what
// --policy gives it.
func TestServeResourceServer(t *testing.T) {
	const key = "k-cli-0123456789abcdef"
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true})
	pol := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(pol, []byte(`{"rules":[{"principals":["ci"],"allow":["alpha/*"]},{"principals":["alice"],"allow":["alpha/echo"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--api-key", "ci=MCP_KEY_CI", "--issuer", as.URL, "--scope", testauth.BaseScope, "--policy", pol)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "MCP_KEY_CI="+key)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var printed []string
	url := ""
	deadline := time.After(60 * time.Second)
	for url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended:\n%s\n%s", strings.Join(printed, "\n"), stderr.String())
			}
			printed = append(printed, l)
			if _, rest, ok := strings.Cut(l, "listening on "); ok {
				url = strings.Fields(rest)[0]
			}
		case <-deadline:
			t.Fatalf("serve did not say where it listens:\n%s", strings.Join(printed, "\n"))
		}
	}
	out := strings.Join(printed, "\n")
	for _, want := range []string{"OAuth resource server", "API keys of ci", "JWTs of " + as.URL, "/.well-known/oauth-protected-resource/mcp"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve printed no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr.String(), key) {
		t.Error("serve printed the API key")
	}

	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, "resource_metadata=") {
		t.Errorf("no credential: %d %q", resp.StatusCode, ch)
	}
	cli(t, "", "tools", "--header", "Authorization: Bearer "+key, url).Must(t, 0, []string{"echo", "add"}, nil)
	tok, err := as.SignToken(map[string]any{"sub": "alice", "aud": url, "scope": testauth.BaseScope})
	if err != nil {
		t.Fatal(err)
	}
	// alice's policy gives her echo only.
	r := cli(t, "", "tools", "--header", "Authorization: Bearer "+tok, url)
	r.Must(t, 0, []string{"echo"}, nil)
	if strings.Contains(r.Stdout, "add") {
		t.Errorf("alice sees a tool the policy does not give her:\n%s", r.Stdout)
	}
	other, _ := as.SignToken(map[string]any{"sub": "alice", "aud": "https://elsewhere.example/mcp", "scope": testauth.BaseScope})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+other)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a token for another audience: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}
