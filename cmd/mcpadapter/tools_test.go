package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolsShapedAndEmpty: `tools` shows a config's prefix and tool
// transforms, and a server that offers no tools as "(none)", with the
// warning naming it on stderr.
func TestToolsShapedAndEmpty(t *testing.T) {
	web := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	empty := testserver.ServeStreamable(t, mcp.NewServer(&mcp.Implementation{Name: "empty", Version: "1"}, nil), testserver.Stateless())
	dir := t.TempDir()
	writeConfig(t, dir, ".mcp.json", fmt.Sprintf(`{"mcpServers": {
		"knowledge-base": {"url": %q, "prefix": "kb", "description": "Team wiki.", "tools": {"echo": {"name": "say"}, "add": {"enabled": false}}},
		"blank": {"url": %q}
	}}`, web, empty))
	r := cliIn(t, dir, "", "tools")
	r.Must(t, 0, []string{"kb_say", "knowledge-base", "Team wiki. Echo the text back.", "no tools: check its URL or command"},
		[]string{`msg="server lists no tools: check its URL or command, its credentials and its configuration" server=blank`})
	if strings.Contains(r.Stdout, "kb_add") || strings.Contains(r.Stdout, "kb_echo") {
		t.Errorf("a disabled or renamed tool is listed:\n%s", r.Stdout)
	}
	if i := strings.Index(r.Stdout, "(none)"); i < 0 || strings.Fields(r.Stdout[i:])[1] != "blank" {
		t.Errorf("no (none) row for server blank:\n%s", r.Stdout)
	}
	cliIn(t, dir, "", "tools", "--json").Must(t, 0, []string{`"name": "kb_say"`, `"original_name": "echo"`}, []string{"server blank offers no tools"})
	cliIn(t, dir, "", "call", "kb_say", `{"text":"renamed"}`).Must(t, 0, []string{"renamed"}, nil)
}
