package mcpadapter

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transportKind names how a Client reaches its server.
type transportKind string

const (
	kindStdio      transportKind = "stdio"
	kindStreamable transportKind = "streamable-http"
	kindSSE        transportKind = "sse"
	kindInProcess  transportKind = "in-process"
)

// endpoint is a resolved single-server target.
type endpoint struct {
	kind    transportKind
	command Command     // kindStdio
	url     string      // kindStreamable, kindSSE
	server  *mcp.Server // kindInProcess
	// fallbackSSE allows a streamable-http endpoint to fall back to SSE when
	// the server answers as a legacy SSE server does.
	fallbackSSE bool
}

// defaultName is the server name used when the caller gives none.
func (e *endpoint) defaultName() string {
	switch e.kind {
	case kindStdio:
		return e.command.Name()
	case kindInProcess:
		return "in-process"
	default:
		if u, err := url.Parse(e.url); err == nil {
			return u.Host
		}
		return e.url
	}
}

// acceptedTargets lists what New and NewClient accept, for error messages.
const acceptedTargets = "an http(s) URL (string or *url.URL), mcpadapter.Command, *mcp.Server, *mcpadapter.Config, *mcpadapter.Client or *mcpadapter.Group"

// resolveEndpoint infers the transport of a single-server target.
func resolveEndpoint(target any) (*endpoint, error) {
	switch t := target.(type) {
	case string:
		return endpointFromString(t)
	case *url.URL:
		if t == nil {
			return nil, &TargetError{Target: "(nil *url.URL)", Reason: "want " + acceptedTargets}
		}
		return endpointFromURL(t.String(), t)
	case Command:
		if t.Path == "" {
			return nil, &TargetError{Target: "mcpadapter.Command{}", Reason: "Command.Path is empty"}
		}
		return &endpoint{kind: kindStdio, command: t}, nil
	case *Command:
		if t == nil {
			return nil, &TargetError{Target: "(nil *mcpadapter.Command)", Reason: "want " + acceptedTargets}
		}
		return resolveEndpoint(*t)
	case *mcp.Server:
		if t == nil {
			return nil, &TargetError{Target: "(nil *mcp.Server)", Reason: "want " + acceptedTargets}
		}
		return &endpoint{kind: kindInProcess, server: t}, nil
	case nil:
		return nil, &TargetError{Target: "nil", Reason: "want " + acceptedTargets}
	default:
		return nil, &TargetError{Target: fmt.Sprintf("of type %T", target), Reason: "unsupported; want " + acceptedTargets}
	}
}

func endpointFromString(s string) (*endpoint, error) {
	trimmed := strings.TrimSpace(s)
	u, err := url.Parse(trimmed)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		reason := "not an http(s) URL; a string target never starts a process: to run a local server, pass mcpadapter.Command{Path: ...} or mcpadapter.Script(path)"
		if _, statErr := os.Stat(trimmed); statErr == nil {
			reason = "names a local file, but a string target never starts a process: pass mcpadapter.Script(" + fmt.Sprintf("%q", trimmed) + ") to run it over stdio"
		}
		return nil, &TargetError{Target: fmt.Sprintf("%q", s), Reason: reason}
	}
	return endpointFromURL(trimmed, u)
}

func endpointFromURL(raw string, u *url.URL) (*endpoint, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &TargetError{Target: fmt.Sprintf("%q", raw), Reason: "only http and https URLs are supported"}
	}
	if u.Host == "" {
		return nil, &TargetError{Target: fmt.Sprintf("%q", raw), Reason: "the URL has no host"}
	}
	if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
		return &endpoint{kind: kindSSE, url: raw}, nil
	}
	return &endpoint{kind: kindStreamable, url: raw, fallbackSSE: true}, nil
}
