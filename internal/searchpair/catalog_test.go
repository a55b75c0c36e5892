package searchpair

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/toolsearch"
)

type tool struct{ name, server, desc string }

func newCatalog(tools ...tool) *Catalog[tool] {
	c := &Catalog[tool]{}
	docs := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		docs[i] = toolsearch.Doc{ID: t.name, Name: t.name, Description: t.desc}
	}
	c.Set(tools, func(t tool) string { return t.name }, func(t tool) string { return t.server }, docs, 1, 10)
	return c
}

// TestCatalogStaleAndRemoved: a catalog is stale before its first
// listing, when the version moves on and when it is older than maxAge; a
// tool missing from the next listing is removed, by its server.
func TestCatalogStaleAndRemoved(t *testing.T) {
	var c Catalog[tool]
	if !c.Stale(0, time.Hour) {
		t.Fatal("an empty catalog is not stale")
	}
	c = *newCatalog(tool{"a", "s1", "forecast"}, tool{"b", "s2", "files"})
	if c.Stale(1, time.Hour) || !c.Stale(2, time.Hour) || !c.Stale(1, -time.Second) {
		t.Fatal("Stale")
	}
	c.Set([]tool{{"a", "s1", "forecast"}}, func(t tool) string { return t.name }, func(t tool) string { return t.server }, nil, 2, 5)
	if c.Removed["b"] != "s2" || len(c.Tools) != 1 || c.Size != 5 {
		t.Fatalf("removed %v, tools %v", c.Removed, c.Tools)
	}
}

// TestParseAndAnswer: the model's arguments are read, their problems are
// texts for the model, and the answers name tools or say why not.
func TestParseAndAnswer(t *testing.T) {
	for args, want := range map[string]string{`{"query":" "}`: `"query" is empty`, `[1]`: "send {\"query\"", `{"query":5}`: "right shape"} {
		if _, _, p := ParseSearch(json.RawMessage(args), 0); !strings.Contains(p, want) {
			t.Errorf("ParseSearch(%s) = %q, want %q", args, p, want)
		}
	}
	if q, n, p := ParseSearch(json.RawMessage(`{"query":"weather","limit":50}`), 3); q != "weather" || n != MaxLimit || p != "" {
		t.Errorf("ParseSearch: %q %d %q", q, n, p)
	}
	if _, n, _ := ParseSearch(nil, 0); n != 0 {
		t.Errorf("empty arguments: limit %d", n)
	}
	if _, n, _ := ParseSearch(json.RawMessage(`{"query":"x"}`), 0); n != DefaultLimit {
		t.Errorf("default limit %d", n)
	}
	c := newCatalog(tool{"get_forecast", "weather", "Weather forecast for a city."}, tool{"read_file", "files", "Read a file."})
	match := func(t tool) Match {
		return Match{Name: t.name, Description: t.desc, InputSchema: json.RawMessage(`{}`)}
	}
	server := func(t tool) string { return t.server }
	if text, err := Search(c.Tools, c.Index, "forecast", 5, match, server); err != nil || !strings.Contains(text, "get_forecast") {
		t.Errorf("Search: %q, %v", text, err)
	}
	if text, _ := Search(c.Tools, c.Index, "zzzz", 5, match, server); !strings.Contains(text, "files, weather") {
		t.Errorf("no match: %q", text)
	}
	if _, _, p := ParseCall(json.RawMessage(`{"name":"call_tool"}`), "search_tools", "call_tool"); !strings.Contains(p, "directly") {
		t.Errorf("ParseCall of the pair: %q", p)
	}
	name, args, p := ParseCall(json.RawMessage(`{"name":"read_file","arguments":{"path":"a"}}`))
	if name != "read_file" || string(args) != `{"path":"a"}` || p != "" {
		t.Errorf("ParseCall: %q %s %q", name, args, p)
	}
	if got, p := Resolve(c.Tools, nil, c.Index, "read_file", args); got.name != "read_file" || p != "" {
		t.Errorf("Resolve: %v %q", got, p)
	}
	if _, p := Resolve(c.Tools, nil, c.Index, "read_file", json.RawMessage(`[1]`)); !strings.Contains(p, "must be a JSON object") {
		t.Errorf("Resolve, arguments not an object: %q", p)
	}
	if _, p := Resolve(c.Tools, map[string]string{"gone": "files"}, c.Index, "gone", nil); !strings.Contains(p, `removed by server "files"`) {
		t.Errorf("Resolve of a removed tool: %q", p)
	}
	if _, p := Resolve(c.Tools, nil, c.Index, "read_files", nil); !strings.Contains(p, "no tool named") {
		t.Errorf("Resolve of an unknown tool: %q", p)
	}
}
