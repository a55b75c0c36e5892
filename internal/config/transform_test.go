package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseTransformMembers(t *testing.T) {
	doc := `{"mcpServers":{
		"kb": {"url": "https://kb.example/mcp", "maxConcurrentCalls": 2, "prefix": "docs", "description": "Internal wiki.",
			"tools": {
				"search": {"name": "search_docs", "description": "Search the wiki.", "enabled": true,
					"arguments": {"tenant": {"hide": true, "default": "acme"}, "limit": {"default": 10, "description": "How many."},
						"q": {"name": "query"}, "x": {"default": null, "hide": null}}},
				"delete": {"enabled": false},
				"other": {"name": null}
			}},
		"copilot": {"command": "x", "tools": ["*"], "description": {"text": "not ours"}, "maxConcurrentCalls": 0}
	}}`
	d, err := parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	kb := d.Servers[0]
	if kb.MaxConcurrentCalls != 2 || kb.Prefix != "docs" || kb.Description != "Internal wiki." {
		t.Errorf("kb: %+v", kb)
	}
	want := map[string]*Tool{
		"search": {Name: "search_docs", Description: "Search the wiki.", Arguments: map[string]*Argument{
			"tenant": {Hide: true, Default: json.RawMessage(`"acme"`)},
			"limit":  {Default: json.RawMessage(`10`), Description: "How many."},
			"q":      {Name: "query"},
			"x":      {},
		}},
		"delete": {Disabled: true},
		"other":  {},
	}
	if !reflect.DeepEqual(kb.Tools, want) {
		t.Errorf("tools:\n%s\nwant\n%s", dump(kb.Tools), dump(want))
	}
	cp := d.Servers[1]
	if cp.Tools != nil || cp.Description != "" || string(cp.Extra["tools"]) != `["*"]` || string(cp.Extra["description"]) != `{"text": "not ours"}` {
		t.Errorf("another program's members: %+v", cp)
	}
}

func TestParseTransformErrors(t *testing.T) {
	doc := `{"mcpServers":{"kb":{"command":"x",
"maxConcurrentCalls": -1,
"prefix": "kb docs",
"tools": {
  "a": {"name": "a b", "enabled": "no", "color": 1},
  "b": 5,
  "c": {"arguments": [1]},
  "d": {"arguments": {"x": 1, "y": {"name": "", "hide": 1, "type": "string"}}},
  "": {}
}},
"k2":{"command":"x","maxConcurrentCalls": 1.5, "prefix": 7}}}`
	_, err := parse([]byte(doc))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`line 2, column 23: mcpServers.kb.maxConcurrentCalls: want a whole number of calls (0 for no cap), not -1`,
		`line 3, column 11: mcpServers.kb.prefix: prefix "kb docs" is not allowed: it starts tool names (kb_search), so it must match ^[A-Za-z0-9_-]+$ and be at most 64 bytes`,
		`line 5, column 17: mcpServers.kb.tools.a.name: tool name "a b" is not allowed: model APIs take names matching ^[A-Za-z0-9_-]{1,64}$`,
		`line 5, column 35: mcpServers.kb.tools.a.enabled: want true or false, not a string`,
		`line 5, column 41: mcpServers.kb.tools.a.color: unknown tool member "color"; want name, description, enabled, arguments, timeout, maxResultBytes, tasks or skipArgumentCheck`,
		`line 6, column 8: mcpServers.kb.tools.b: want an object such as {"name": "...", "description": "...", "arguments": {...}}, not a number`,
		`line 7, column 22: mcpServers.kb.tools.c.arguments: want an object of arguments by name, such as {"limit": {"default": 10}}, not an array`,
		`line 8, column 28: mcpServers.kb.tools.d.arguments.x: want an object such as {"default": 10, "hide": true}, not a number`,
		`line 8, column 45: mcpServers.kb.tools.d.arguments.y.name: empty argument name`,
		`line 8, column 57: mcpServers.kb.tools.d.arguments.y.hide: want true or false, not a number`,
		`line 8, column 60: mcpServers.kb.tools.d.arguments.y.type: unknown argument member "type"; want name, description, default or hide`,
		`line 9, column 3: mcpServers.kb.tools[""]: empty tool name`,
		`line 11, column 43: mcpServers.k2.maxConcurrentCalls: want a whole number of calls (0 for no cap), not 1.5`,
		`line 11, column 58: mcpServers.k2.prefix: want a string, not a number`,
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPaths checks the paths of a transform's parts in a config and in
// the API, with a key that JSON paths must quote.
func TestPaths(t *testing.T) {
	cfg := Paths{Base: JoinPath("mcpServers", "kb")}
	tool := cfg.Tool("web.search")
	if got := cfg.Arg(tool, "q"); got != `mcpServers.kb.tools["web.search"].arguments.q` {
		t.Errorf("config arg path = %s", got)
	}
	if got := cfg.Member(tool, "maxResultBytes", "MaxResultBytes"); got != `mcpServers.kb.tools["web.search"].maxResultBytes` {
		t.Errorf("config member path = %s", got)
	}
	api := Paths{API: true, Base: `Options.Transforms["kb"]`}
	tool = api.Tool("web.search")
	if got := api.Arg(tool, "q"); got != `Options.Transforms["kb"].Tools["web.search"].Arguments["q"]` {
		t.Errorf("API arg path = %s", got)
	}
	if got := api.Member(tool, "maxResultBytes", "MaxResultBytes"); got != `Options.Transforms["kb"].Tools["web.search"].MaxResultBytes` {
		t.Errorf("API member path = %s", got)
	}
}
