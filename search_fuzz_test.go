package mcpadapter

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzToolSearch feeds arbitrary schemas, descriptions, queries and
// search_tools arguments to the catalog: no panic, every hit a tool of
// the catalog, every answer a result.
func FuzzToolSearch(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"city":{"type":"string","description":"The city."}}}`), "Weather forecast.", "forecast for Paris", []byte(`{"query":"forecast","limit":2}`))
	f.Add([]byte(`{"properties":[1,2]}`), "", "", []byte(`{"query":5}`))
	f.Add([]byte(`null`), "\xff\xfe", "ÉTÉ_été-2", []byte(`{"query":"x","limit":-3}`))
	f.Fuzz(func(t *testing.T, schema []byte, desc, query string, args []byte) {
		tools := []*Tool{
			{Name: "get_forecast", Description: desc, InputSchema: schema},
			{Name: "other", Description: query, InputSchema: json.RawMessage(`{"type":"object"}`)},
		}
		for _, h := range SearchTools(tools, query, 3) {
			if h.Tool == nil || h.Score <= 0 {
				t.Fatalf("SearchTools(%q): hit %+v", query, h)
			}
		}
		s := &toolSearch{}
		setCatalog(s.catalogOf(context.Background()), tools, 0)
		s.a = &Adapter{group: &Group{}} // ToolsVersion 0: the catalog is current
		res, err := searchTool{s}.call(context.Background(), args, nil)
		if err != nil || res == nil {
			t.Fatalf("search_tools %q: %v, %v", args, res, err)
		}
	})
}
