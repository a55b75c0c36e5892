package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// uiProcess runs "mcpadapter ui ARGS --no-open" until the test ends and
// returns the address it printed.
func uiProcess(t *testing.T, args ...string) *url.URL {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"ui", "--no-open"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "MCP_TOKEN=", "CI=true")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// One reader: the lines go to the test until the address, then are
	// drained until the process exits.
	lines := make(chan string, 16)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if !sent {
				lines <- sc.Text()
				sent = strings.Contains(sc.Text(), "token=")
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("mcpadapter ui ended with %v on Ctrl-C; stderr:\n%s", err, stderr.String())
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("mcpadapter ui did not stop on Ctrl-C")
		}
	})
	re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`)
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("mcpadapter ui printed no address; stderr:\n%s", stderr.String())
			}
			if m := re.FindString(line); m != "" {
				u, err := url.Parse(m)
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
		case <-deadline:
			t.Fatalf("no address after 60s; stderr:\n%s", stderr.String())
		}
	}
}

// uiState logs in with the one-time token and returns /api/state.
func uiState(t *testing.T, u *url.URL) map[string]any {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "http://" + u.Host
	resp, err := noRedirect.Get(base + "/api/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: status %d, want 401", resp.StatusCode)
	}
	resp, err = noRedirect.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("the token: status %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := url.ParseQuery(loc.Fragment)
	req, _ := http.NewRequest("GET", base+"/api/state", nil)
	req.AddCookie(resp.Cookies()[0])
	req.Header.Set("X-Mcpadapter-Key", key.Get("key"))
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestUIDemo(t *testing.T) {
	u := uiProcess(t)
	st := uiState(t, u)
	b, _ := json.Marshal(st)
	for _, want := range []string{`"source":"demo"`, `"name":"weather_forecast"`, `"name":"math_count"`, `"protocolVersion":"2025-11-25"`, `"protocolVersion":"2026-07-28"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("state lacks %s: %.400s", want, b)
		}
	}
}

// TestUIFailedServer: a URL that is a website, not an MCP endpoint. The
// page says why the connection failed, with the hint the terminal gives.
func TestUIFailedServer(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>a website</html>")
	}))
	defer site.Close()
	u := uiProcess(t, site.URL+"/docs")
	st := uiState(t, u)
	failed, _ := st["unavailable"].([]any)
	if len(failed) != 1 {
		t.Fatalf("unavailable: %v", st["unavailable"])
	}
	f := failed[0].(map[string]any)
	if msg, _ := f["error"].(string); !strings.Contains(msg, "probably not the server's MCP endpoint") || !strings.Contains(msg, site.URL+"/docs/mcp") {
		t.Errorf("the failure says %q", msg)
	}
}

func TestUIUsage(t *testing.T) {
	cli(t, "", "ui", "--port", "70000").Must(t, 2, nil, []string{"--port 70000"})
}
