package mcpadapter_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serviceWithMCPAt serves a website at / (an HTML page), the MCP server at
// /mcp, and 404 everywhere else: what a URL at a service's root reaches.
func serviceWithMCPAt(t *testing.T) *httptest.Server {
	t.Helper()
	srv := testserver.New(testserver.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>Acme</title><h1>Welcome to Acme</h1>"))
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs
}

// TestEndpointHint: a URL that is not the MCP endpoint (the service's root
// page, a path that is 404) fails with an error that says so and names the
// likely endpoint, which works.
func TestEndpointHint(t *testing.T) {
	hs := serviceWithMCPAt(t)
	tests := []struct {
		name, path, answer, try string
	}{
		{"root answers with an HTML page", "/", "an HTML page", hs.URL + "/mcp"},
		{"path answers 404", "/api?key=s3cret", "404 Not Found", hs.URL + "/api/mcp or " + hs.URL + "/mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			c, err := mcpadapter.NewClient(hs.URL+tt.path, &mcpadapter.ClientOptions{Name: "acme"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Tools(ctx)
			var te *mcpadapter.TransportError
			if !errors.As(err, &te) || te.Server != "acme" {
				t.Fatalf("Tools: %v (%T), want a TransportError of server acme", err, err)
			}
			msg := err.Error()
			for _, want := range []string{"answered the first request with " + tt.answer, "probably not the server's MCP endpoint", "try " + tt.try + ":"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "s3cret") {
				t.Errorf("error shows the query's secret:\n%s", msg)
			}
			t.Log(msg)

			good, err := mcpadapter.NewClient(hs.URL+"/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer good.Close()
			if tools, err := good.Tools(ctx); err != nil || len(tools) == 0 {
				t.Fatalf("the suggested endpoint: %d tools, %v", len(tools), err)
			}
		})
	}
}

// TestEndpointHintNotForMCPPaths: a 404 at a path that is already /mcp
// gets no suggestion to add /mcp.
func TestEndpointHintNotForMCPPaths(t *testing.T) {
	hs := serviceWithMCPAt(t)
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(hs.URL+"/v2/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Tools(ctx)
	if err == nil || strings.Contains(err.Error(), "try ") {
		t.Fatalf("Tools: %v, want an error without a suggestion", err)
	}
}

// TestEndpointHintStaticSite: a static site answers the first POST with
// 405 Method Not Allowed (a web app whose routes take GET only) or 501
// Not Implemented (python3 -m http.server): the error says what it answered and which
// endpoint to try, and names each step of the failure once.
func TestEndpointHintStaticSite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><h1>docs</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	sites := []struct{ name, url, answer string }{}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir(dir)))
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)
	sites = append(sites, struct{ name, url, answer string }{"web app with GET routes", app.URL + "/docs/", "405 Method Not Allowed"})
	if py, err := exec.LookPath("python3"); err == nil {
		sites = append(sites, struct{ name, url, answer string }{"python3 -m http.server", pythonHTTPServer(t, py, dir) + "/", "501 Not Implemented"})
	} else if os.Getenv("CI") == "true" {
		t.Fatal("python3 is not installed")
	}
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			ctx := testCtx(t)
			c, err := mcpadapter.NewClient(s.url, &mcpadapter.ClientOptions{Name: "site"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Tools(ctx)
			var te *mcpadapter.TransportError
			if !errors.As(err, &te) {
				t.Fatalf("Tools: %v (%T), want a TransportError", err, err)
			}
			msg := err.Error()
			u, _ := url.Parse(s.url)
			try := "try " + strings.TrimSuffix(s.url, "/") + "/mcp"
			if strings.TrimSuffix(u.Path, "/") != "" {
				try += " or " + u.Scheme + "://" + u.Host + "/mcp"
			}
			for _, want := range []string{"answered the first request with " + s.answer, "probably not the server's MCP endpoint", try} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q:\n%s", want, msg)
				}
			}
			if n := strings.Count(msg, `"initialize"`); n > 1 {
				t.Errorf("the error names the initialize step %d times:\n%s", n, msg)
			}
			t.Log(msg)
		})
	}
}

// pythonHTTPServer serves dir with python3 -m http.server on a loopback
// port and returns its URL.
func pythonHTTPServer(t *testing.T, py, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(py, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	u := "http://127.0.0.1:" + strconv.Itoa(port)
	for range 300 { // python3 may take seconds to start on a busy machine
		if resp, err := http.Get(u + "/"); err == nil {
			resp.Body.Close()
			return u
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("python3 -m http.server did not start in 30s")
	return ""
}
