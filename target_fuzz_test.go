package mcpadapter

import (
	"errors"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/engine"
)

func FuzzResolveTarget(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:8080/mcp", "https://example.com/sse", "https://example.com/sse/", "./server.py",
		"ftp://x", "", " http://a ", "http://", "http://[::1]:80/mcp", "node server.js", "HTTP://A/SSE", "\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ep, err := resolveEndpoint(s)
		if err != nil {
			var te *TargetError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TargetError", err)
			}
			return
		}
		if ep.Kind != engine.Streamable && ep.Kind != engine.SSE {
			t.Fatalf("string %q resolved to %s: a string must never start a process", s, ep.Kind)
		}
		if defaultName(ep) == "" {
			t.Fatalf("empty default name for %q", s)
		}
	})
}
