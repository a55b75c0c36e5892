package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestConfigEndpoint: a config server's stdio command with its
// environment sorted, an http or sse URL of that transport, and the
// member at fault for an unknown transport or a bad URL.
func TestConfigEndpoint(t *testing.T) {
	ep, _, _ := ConfigEndpoint("stdio", "", "srv", []string{"-v"}, map[string]string{"B": "2", "A": "1"}, []string{"HOME"}, "/tmp")
	if ep == nil || ep.Kind != Stdio || ep.Command.Path != "srv" || !slices.Equal(ep.Command.Env, []string{"A=1", "B=2"}) || ep.Command.Dir != "/tmp" || !slices.Equal(ep.Command.InheritEnv, []string{"HOME"}) {
		t.Fatalf("stdio: %+v", ep)
	}
	if ep, _, _ := ConfigEndpoint("http", "https://example.com/mcp", "", nil, nil, nil, ""); ep == nil || ep.Kind != Streamable || !ep.FallbackSSE {
		t.Fatalf("http: %+v", ep)
	}
	if ep, _, _ := ConfigEndpoint("sse", "https://example.com/mcp", "", nil, nil, nil, ""); ep == nil || ep.Kind != SSE || ep.FallbackSSE {
		t.Fatalf("sse: %+v", ep)
	}
	if ep, member, msg := ConfigEndpoint("ws", "", "", nil, nil, nil, ""); ep != nil || member != "transport" || msg != `unknown transport "ws"` {
		t.Fatalf("ws: %v %q %q", ep, member, msg)
	}
	if ep, member, msg := ConfigEndpoint("http", "ftp://x", "", nil, nil, nil, ""); ep != nil || member != "url" || !strings.HasPrefix(msg, "mcpadapter: target ") {
		t.Fatalf("ftp URL: %v %q %q", ep, member, msg)
	}
}

// TestScript: a script's interpreter by its extension, and a bare name
// run from the current directory.
func TestScript(t *testing.T) {
	for _, c := range []struct {
		path, prog string
		args       []string
	}{
		{"a.py", "python3", []string{"a.py", "x"}},
		{"a.MJS", "node", []string{"a.MJS", "x"}},
		{"a.ts", "npx", []string{"-y", "tsx", "a.ts", "x"}},
		{"bin/srv", "bin/srv", []string{"x"}},
		{"srv", "./srv", []string{"x"}},
	} {
		if p, a := Script(c.path, []string{"x"}); p != c.prog || !slices.Equal(a, c.args) {
			t.Errorf("Script(%q) = %q %q, want %q %q", c.path, p, a, c.prog, c.args)
		}
	}
}
