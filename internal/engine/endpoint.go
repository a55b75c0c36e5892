package engine

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Endpoint is a resolved single-server target: its transport and what it
// runs or reaches.
type Endpoint struct {
	Kind    Kind
	Command Command     // Stdio
	URL     string      // Streamable, SSE
	Server  *mcp.Server // InProcess
	// FallbackSSE lets a Streamable endpoint fall back to SSE when the
	// server answers as a legacy SSE server does.
	FallbackSSE bool
}

// Command is a stdio server's command line: field for field the root's
// Command, which converts to it.
type Command struct {
	Path                  string
	Args, Env, InheritEnv []string
	Dir                   string
}

// HTTP reports whether e is reached over HTTP (streamable or SSE).
func (e *Endpoint) HTTP() bool { return e.Kind == Streamable || e.Kind == SSE }

// Local reports whether e is a process or an in-process server: one
// session at a time, and no HTTP settings.
func (e *Endpoint) Local() bool { return e.Kind == Stdio || e.Kind == InProcess }

// Describe says what e runs or reaches, for messages: the command line
// (cut to 200 bytes), the URL or "in-process".
func (e *Endpoint) Describe() string {
	switch e.Kind {
	case Stdio:
		s := strings.Join(append([]string{e.Command.Path}, e.Command.Args...), " ")
		if len(s) > 200 {
			s = strings.ToValidUTF8(s[:200], "") + "..."
		}
		return fmt.Sprintf("%q", s)
	case InProcess:
		return "in-process"
	}
	return fmt.Sprintf("%q", e.URL)
}

// ParseEndpoint returns the endpoint of s, an http(s) URL as text, or why
// it is none: reason names what is wrong and what to pass instead (the
// root's Command, Script), and target is s as the message shows it.
func ParseEndpoint(s string) (_ *Endpoint, target, reason string) {
	trimmed := strings.TrimSpace(s)
	u, err := url.Parse(trimmed)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		reason := "not an http(s) URL; a string target never starts a process: to run a local server, pass mcpadapter.Command{Path: ...} or mcpadapter.Script(path)"
		if _, statErr := os.Stat(trimmed); statErr == nil {
			reason = "names a local file, but a string target never starts a process: pass mcpadapter.Script(" + fmt.Sprintf("%q", trimmed) + ") to run it over stdio"
		}
		return nil, fmt.Sprintf("%q", s), reason
	}
	return URLEndpoint(trimmed, u)
}

// URLEndpoint returns the endpoint of u, whose text is raw: SSE for a path
// ending in /sse, else streamable HTTP that may fall back to SSE; or why it
// is none, as ParseEndpoint.
func URLEndpoint(raw string, u *url.URL) (_ *Endpoint, target, reason string) {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Sprintf("%q", raw), "only http and https URLs are supported"
	case u.Host == "":
		return nil, fmt.Sprintf("%q", raw), "the URL has no host"
	case strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse"):
		return &Endpoint{Kind: SSE, URL: raw}, "", ""
	}
	return &Endpoint{Kind: Streamable, URL: raw, FallbackSSE: true}, "", ""
}

// ConfigEndpoint returns the endpoint of a config's server: for transport
// "stdio", command run with args, env (sorted into KEY=VALUE), the
// variables inheritEnv names and dir; for "http" and "sse", rawURL's, of
// that transport. Else it returns the member at fault ("transport" or
// "url") and why.
func ConfigEndpoint(transport, rawURL, command string, args []string, env map[string]string, inheritEnv []string, dir string) (_ *Endpoint, member, msg string) {
	switch transport {
	case "stdio":
		kv := make([]string, 0, len(env))
		for k, v := range env {
			kv = append(kv, k+"="+v)
		}
		slices.Sort(kv)
		return &Endpoint{Kind: Stdio, Command: Command{Path: command, Args: args, Env: kv, InheritEnv: inheritEnv, Dir: dir}}, "", ""
	case "http", "sse":
	default:
		return nil, "transport", fmt.Sprintf("unknown transport %q", transport)
	}
	ep, target, reason := ParseEndpoint(rawURL)
	if ep == nil {
		return nil, "url", fmt.Sprintf("mcpadapter: target %s: %s", target, reason) // a TargetError's text
	}
	if transport == "sse" {
		ep.Kind, ep.FallbackSSE = SSE, false
	} else {
		ep.Kind, ep.FallbackSSE = Streamable, true
	}
	return ep, "", ""
}

// Script returns the program and arguments that run the script at path
// with args: ".py" with python3, ".js", ".mjs" and ".cjs" with node, ".ts"
// with npx tsx, and anything else as an executable (./path when path has
// no separator).
func Script(path string, args []string) (string, []string) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".py":
		return "python3", append([]string{path}, args...)
	case ".js", ".mjs", ".cjs":
		return "node", append([]string{path}, args...)
	case ".ts":
		return "npx", append([]string{"-y", "tsx", path}, args...)
	}
	if !strings.ContainsRune(path, os.PathSeparator) {
		path = "." + string(os.PathSeparator) + path
	}
	return path, args
}
