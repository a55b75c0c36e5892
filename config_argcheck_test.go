package mcpadapter_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestConfigSkipArgumentCheck reads a config file in each dialect the
// configuration guide lists and checks "skipArgumentCheck": on a server
// entry every tool's arguments go to the server unchecked; on one tool's
// entry only that tool's do; without it the adapter refuses invalid
// arguments before the call.
func TestConfigSkipArgumentCheck(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}))
	bin := testserver.Build(t)
	cmd, _ := json.Marshal(bin)
	dialects := []struct {
		name, doc string // doc has %s for the server's extra members
	}{
		{"Claude Desktop", `{"mcpServers": {"s": {"command": ` + string(cmd) + `, "args": ["-era", "modern"]%s}}}`},
		{"Cursor and Claude Code", `{"mcpServers": {"s": {"url": "` + url + `"%s}}}`},
		{"VS Code", `{"inputs": [], "servers": {"s": {"type": "http", "url": "` + url + `"%s}}}`},
		{"FastMCP", `{"mcpServers": {"s": {"url": "` + url + `", "transport": "streamable-http"%s}}}`},
	}
	cases := []struct {
		name, members string
		echoUnchecked bool
		addUnchecked  bool
	}{
		{"no key", ``, false, false},
		{"server", `, "skipArgumentCheck": true`, true, true},
		{"one tool", `, "tools": {"echo": {"skipArgumentCheck": true}}`, true, false},
		{"server false", `, "skipArgumentCheck": false`, false, false},
	}
	for _, d := range dialects {
		for _, c := range cases {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "mcp.json")
				if err := os.WriteFile(path, []byte(fmt.Sprintf(d.doc, c.members)), 0o600); err != nil {
					t.Fatal(err)
				}
				cfg, err := mcpadapter.LoadConfig(path)
				if err != nil {
					t.Fatal(err)
				}
				a, err := mcpadapter.New(cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				ctx := testCtx(t)
				tools, err := a.Tools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				byName := map[string]*mcpadapter.Tool{}
				for _, tl := range tools {
					byName[tl.OriginalName] = tl
				}
				for _, call := range []struct {
					tool, args string
					unchecked  bool
				}{
					{"echo", `{"text": 5}`, c.echoUnchecked},
					{"add", `{"a": "one", "b": 2}`, c.addUnchecked},
				} {
					res, err := byName[call.tool].Call(ctx, json.RawMessage(call.args))
					text := ""
					if res != nil {
						text = res.Text()
					}
					refused := err == nil && res.IsError && strings.Contains(text, "the call was not made")
					if refused == call.unchecked {
						t.Errorf("%s%s: refused by the adapter %v, want %v: %v %s", call.tool, call.args, refused, !call.unchecked, err, text)
					}
				}
			})
		}
	}
}
