package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// anchor is a running third-party proxy in front of the stdio test server.
type anchor struct {
	proxy
	ep         endpoint
	cmd        *exec.Cmd
	perRequest bool // a server process per request (stateless supergateway)
	perSession bool // a server process per session (stateful supergateway)
}

// The anchors' entry points, relative to their npm directory.
const (
	hubMain          = "node_modules/mcp-hub/dist/cli.js"
	supergatewayMain = "node_modules/supergateway/dist/index.js"
	mcpProxyMain     = "node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs"
)

// npmAnchors installs supergateway 4.0, mcp-hub 4.2 and mcp-proxy 6.7 with
// npm (beside node) into dir, unless they are there.
func npmAnchors(ctx context.Context, node, dir string) error {
	missing := false
	for _, m := range []string{hubMain, supergatewayMain, mcpProxyMain} {
		if _, err := os.Stat(filepath.Join(dir, m)); err != nil {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	npm := filepath.Join(filepath.Dir(node), "npm")
	if _, err := os.Stat(npm); err != nil {
		if npm, err = exec.LookPath("npm"); err != nil {
			return errors.New("no npm beside node nor on PATH")
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ictx, npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, "supergateway@4.0", "mcp-hub@4.2", "mcp-proxy@6.7")
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm install supergateway mcp-hub mcp-proxy: %w: %.500s", err, out)
	}
	return nil
}

// startSupergateway runs supergateway's stdio→streamable HTTP bridge in
// front of the stdio test server (stateful: a server per session;
// stateless: a server per request, supergateway's default).
func startSupergateway(ctx context.Context, kids *children, node, dir, server string, stateful bool) (*anchor, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{filepath.Join(dir, supergatewayMain),
		"--stdio", server + " -minimal", "--outputTransport", "streamableHttp",
		"--port", strconv.Itoa(port), "--logLevel", "none"}
	name := "supergateway (stateless)"
	if stateful {
		args = append(args, "--stateful")
		name = "supergateway (stateful)"
	}
	cmd := exec.Command(node, args...)
	if err := kids.start(cmd); err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitHTTP(ctx, addr, 30*time.Second); err != nil {
		kids.stop(cmd)
		return nil, err
	}
	return &anchor{proxy: proxy{name: name, pid: cmd.Process.Pid}, ep: endpoint{url: "http://" + addr + "/mcp"}, cmd: cmd, perRequest: !stateful, perSession: stateful}, nil
}

// startMCPProxy runs mcp-proxy's stdio→streamable HTTP bridge in front of
// the stdio test server, as its README starts it: one server process for
// all sessions, 2026-07-28 served beside the handshake era (its default).
func startMCPProxy(ctx context.Context, kids *children, node, dir, server string) (*anchor, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(node, filepath.Join(dir, mcpProxyMain),
		"--port", strconv.Itoa(port), "--host", "127.0.0.1", "--server", "stream", "--", server, "-minimal")
	if err := kids.start(cmd); err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitHTTP(ctx, addr, 30*time.Second); err != nil {
		kids.stop(cmd)
		return nil, err
	}
	return &anchor{proxy: proxy{name: "mcp-proxy", pid: cmd.Process.Pid}, ep: endpoint{url: "http://" + addr + "/mcp"}, cmd: cmd}, nil
}

// startHub runs mcp-hub with config; its one MCP endpoint for all servers
// is legacy SSE on /mcp.
func startHub(ctx context.Context, kids *children, node, dir, config, home string) (*anchor, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(node, filepath.Join(dir, hubMain), "--port", strconv.Itoa(port), "--config", config)
	// Its logs and state go to a directory of the run.
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home)
	if err := kids.start(cmd); err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitHTTP(ctx, addr, 30*time.Second); err != nil {
		kids.stop(cmd)
		return nil, err
	}
	return &anchor{proxy: proxy{name: "mcp-hub", pid: cmd.Process.Pid}, ep: endpoint{url: "http://" + addr + "/mcp", sse: true}, cmd: cmd}, nil
}

// pkgVersion reads an installed package's version.
func pkgVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return "?"
	}
	_, rest, ok := strings.Cut(string(b), `"version": "`)
	if !ok {
		return "?"
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}
