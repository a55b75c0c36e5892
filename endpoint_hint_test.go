package mcpadapter_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
