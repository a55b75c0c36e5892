package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseCache(t *testing.T) {
	doc := func(cache string) []byte {
		return []byte(`{"mcpServers":{"s":{"url":"https://x.example/mcp","cache":` + cache + `}}}`)
	}
	good := []struct {
		cache string
		want  *Cache
	}{
		{`true`, &Cache{}},
		{`false`, &Cache{Off: true}},
		{`null`, nil},
		{`{}`, &Cache{}},
		{`{"defaultTtl": "30s", "maxTtl": "10m", "maxEntries": 500}`, &Cache{DefaultTTL: 30 * time.Second, MaxTTL: 10 * time.Minute, MaxEntries: 500}},
		{`{"defaultTtl": 1.5, "maxTtl": null, "maxEntries": 0}`, &Cache{DefaultTTL: 1500 * time.Millisecond}},
	}
	for _, tt := range good {
		cfg, err := parse(doc(tt.cache))
		if err != nil {
			t.Errorf("%s: %v", tt.cache, err)
			continue
		}
		sc := cfg.Servers[0]
		if (sc.Cache == nil) != (tt.want == nil) || (sc.Cache != nil && *sc.Cache != *tt.want) {
			t.Errorf("%s: cache %+v; want %+v", tt.cache, sc.Cache, tt.want)
		}
	}
	bad := []struct{ cache, want string }{
		{`"yes"`, `line 1, column 59: mcpServers.s.cache: want true, false or an object such as {"defaultTtl": "30s", "maxTtl": "10m", "maxEntries": 500}, not a string`},
		{`1`, `mcpServers.s.cache: want true, false or an object`},
		{`{"defaultTtl": "soon"}`, `line 1, column 74: mcpServers.s.cache.defaultTtl: want a number of seconds or a duration such as "30s": time: invalid duration "soon"`},
		{`{"maxTtl": "-1s"}`, `mcpServers.s.cache.maxTtl: negative duration "-1s"`},
		{`{"defaultTtl": [1]}`, `mcpServers.s.cache.defaultTtl: want a number of seconds or a duration such as "30s", not an array`},
		{`{"defaultTtl": 1e300}`, `mcpServers.s.cache.defaultTtl: 1e300 seconds is too long`},
		{`{"maxEntries": -1}`, `mcpServers.s.cache.maxEntries: want a number of entries (a whole number, 0 for the default of 1024), not -1`},
		{`{"maxEntries": 2.5}`, `mcpServers.s.cache.maxEntries: want a number of entries`},
		{`{"maxEntries": "500"}`, `mcpServers.s.cache.maxEntries: want a number of entries`},
		{`{"ttlMs": 5}`, `line 1, column 60: mcpServers.s.cache.ttlMs: unknown cache member "ttlMs"; want "defaultTtl", "maxTtl" or "maxEntries"`},
		{`{"ttl": "30s"}`, `line 1, column 60: mcpServers.s.cache.ttl: unknown cache member "ttl": how long to keep results that carry no caching hints is "defaultTtl"`},
		{`{"defaultTtl": "1s", "defaultTtl": "2s"}`, `mcpServers.s.cache.defaultTtl: duplicate key "defaultTtl"`},
	}
	for _, tt := range bad {
		_, err := parse(doc(tt.cache))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.cache, err, tt.want)
		}
	}
}
