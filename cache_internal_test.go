package mcpadapter

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCacheTTLPolicy(t *testing.T) {
	rc := &responseCache{defaultTTL: 30 * time.Second}
	capped := &responseCache{defaultTTL: time.Hour, maxTTL: time.Minute}
	tests := []struct {
		rc          *responseCache
		ttlMs       int
		scope       string
		want        time.Duration
		wantPrivate bool
	}{
		{rc, 60000, "public", time.Minute, false},
		{rc, 60000, "private", time.Minute, true},
		{rc, 60000, "", time.Minute, false}, // the protocol's default scope
		{rc, 60000, "team", time.Minute, true},
		{rc, 0, "public", 0, false},
		{rc, 0, "private", 0, false},
		{rc, -5, "", 0, false},
		{rc, 0, "", 30 * time.Second, true}, // no hints: DefaultTTL, private
		{&responseCache{}, 0, "", 0, true},
		{capped, 3600000, "public", time.Minute, false},
		{capped, 1000, "public", time.Second, false},
		{capped, 0, "", time.Minute, true},
		{rc, int(^uint(0) >> 1), "public", 1<<63 - 1, false},
	}
	for _, tt := range tests {
		got, private := tt.rc.ttl(tt.ttlMs, tt.scope)
		if got != tt.want || (got > 0 && private != tt.wantPrivate) {
			t.Errorf("ttl(%d, %q) with default %v, max %v = %v, %v; want %v, %v",
				tt.ttlMs, tt.scope, tt.rc.defaultTTL, tt.rc.maxTTL, got, private, tt.want, tt.wantPrivate)
		}
	}
}

func TestCacheIdentity(t *testing.T) {
	web := &endpoint{kind: kindStreamable, url: "https://api.example.com/mcp?key=s3cret"}
	part := func(o ClientOptions) string { return identityPartition(web, &o) }

	alice := part(ClientOptions{Auth: BearerToken("alice-token")})
	if alice != part(ClientOptions{Auth: BearerToken("alice-token")}) {
		t.Error("the same token gives two partitions")
	}
	if alice == part(ClientOptions{Auth: BearerToken("bob-token")}) || alice == part(ClientOptions{}) {
		t.Error("different tokens share a partition")
	}
	h1 := part(ClientOptions{Headers: map[string]string{"X-Api-Key": "k1", "x-tenant": "a"}})
	if h1 != part(ClientOptions{Headers: map[string]string{"x-api-key": "k1", "X-Tenant": "a"}}) {
		t.Error("header names in another case give another partition")
	}
	if h1 == part(ClientOptions{Headers: map[string]string{"X-Api-Key": "k2", "X-Tenant": "a"}}) {
		t.Error("different header values share a partition")
	}
	// Identities this package cannot see are never shared.
	for name, o := range map[string]ClientOptions{
		"AuthFunc":   {Auth: AuthFunc(func(next http.RoundTripper) http.RoundTripper { return next })},
		"HTTPClient": {HTTPClient: &http.Client{}},
	} {
		if first, second := part(o), part(o); first == second {
			t.Errorf("%s: two clients share a partition", name)
		}
	}

	rc := &responseCache{server: serverIdentity(web), private: alice}
	for _, k := range []string{rc.key(methodListTools, "", alice), rc.key(methodReadResource, "file:///x", publicPartition)} {
		if strings.Contains(k, "alice-token") || strings.Contains(k, "s3cret") {
			t.Errorf("key %q holds a secret", k)
		}
		if !strings.HasPrefix(k, cacheKeyVersion+"\x00") {
			t.Errorf("key %q lacks the version", k)
		}
	}
	if serverIdentity(web) != serverIdentity(&endpoint{kind: kindSSE, url: web.url}) {
		t.Error("one URL, two identities")
	}
	cmd := func(env ...string) string {
		return serverIdentity(&endpoint{kind: kindStdio, command: Command{Path: "srv", Args: []string{"a b"}, Env: env}})
	}
	if cmd("A=1", "B=2") != cmd("B=2", "A=1") || cmd("A=1") == cmd("A=2") {
		t.Error("stdio identity does not follow the command's environment")
	}
	if serverIdentity(&endpoint{kind: kindStdio, command: Command{Path: "srv", Args: []string{"a", "b"}}}) == cmd() {
		t.Error("args [a b] and [a b] joined hash alike")
	}
	inproc := &endpoint{kind: kindInProcess}
	if first, second := serverIdentity(inproc), serverIdentity(inproc); first == second {
		t.Error("in-process servers share an identity")
	}
}

func TestCacheKeyPrefixes(t *testing.T) {
	ctx := context.Background()
	rc := &responseCache{store: NewMemoryCacheStore(0), server: "s1", private: "u1"}
	other := &responseCache{store: rc.store, server: "s2", private: "u1"}
	e := CacheEntry{Value: []byte(`{}`), Expires: time.Now().Add(time.Hour)}
	set := []string{
		rc.key(methodListTools, "", "u1"),
		rc.key(methodListTools, "page2", publicPartition),
		rc.key(methodListTemplates, "", "u1"),
		rc.key(methodReadResource, "file:///a", "u1"),
		rc.key(methodReadResource, "file:///a/b", publicPartition),
		rc.key(methodReadResource, "file:///ab", "u1"),
		other.key(methodListTools, "", "u1"),
	}
	for _, k := range set {
		rc.store.Set(ctx, k, e)
	}
	has := func(k string) bool { _, ok := rc.store.Get(ctx, k); return ok }

	rc.invalidate(ctx, methodListTools)
	if has(set[0]) || has(set[1]) {
		t.Error("tools/list survived its invalidation")
	}
	if !has(set[2]) || !has(set[6]) {
		t.Error("invalidating tools/list dropped another method's or server's entries")
	}
	rc.invalidateResource(ctx, "file:///a/")
	if !has(set[3]) || has(set[4]) || !has(set[5]) {
		t.Error("file:///a/ did not drop exactly the resources under it")
	}
	rc.invalidateResource(ctx, "file:///a")
	if has(set[3]) {
		t.Error("file:///a survived its update")
	}
}

func TestMemoryCacheStore(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryCacheStore(2).(*memoryStore)
	fresh := CacheEntry{Value: []byte("1"), Expires: time.Now().Add(time.Hour)}
	s.Set(ctx, "a", fresh)
	s.Set(ctx, "b", fresh)
	s.Get(ctx, "a") // a is now the most recently used
	s.Set(ctx, "c", fresh)
	if _, ok := s.Get(ctx, "b"); ok {
		t.Error("the least recently used entry was kept")
	}
	if _, ok := s.Get(ctx, "a"); !ok {
		t.Error("a recently used entry was dropped")
	}
	s.Set(ctx, "a", CacheEntry{Value: []byte("2"), Expires: time.Now().Add(-time.Second)})
	if _, ok := s.Get(ctx, "a"); ok || s.Len() != 1 {
		t.Errorf("an expired entry was served or kept (%d entries)", s.Len())
	}
	s.Delete(ctx, "c")
	s.Delete(ctx, "missing")
	if s.Len() != 0 {
		t.Errorf("%d entries after deleting all", s.Len())
	}
	if d := NewMemoryCacheStore(0).(*memoryStore); d.max != DefaultCacheEntries {
		t.Errorf("default size %d", d.max)
	}
}

func TestParseConfigCache(t *testing.T) {
	doc := func(cache string) []byte {
		return []byte(`{"mcpServers":{"s":{"url":"https://x.example/mcp","cache":` + cache + `}}}`)
	}
	good := []struct {
		cache   string
		want    *CacheConfig
		noCache bool
	}{
		{`true`, &CacheConfig{}, false},
		{`false`, nil, true},
		{`null`, nil, false},
		{`{}`, &CacheConfig{}, false},
		{`{"ttl": "30s", "maxTtl": "10m", "maxEntries": 500}`, &CacheConfig{DefaultTTL: 30 * time.Second, MaxTTL: 10 * time.Minute, MaxEntries: 500}, false},
		{`{"ttl": 1.5, "maxTtl": null, "maxEntries": 0}`, &CacheConfig{DefaultTTL: 1500 * time.Millisecond}, false},
	}
	for _, tt := range good {
		cfg, err := ParseConfigEnv(doc(tt.cache), lookupTestEnv)
		if err != nil {
			t.Errorf("%s: %v", tt.cache, err)
			continue
		}
		sc := cfg.Servers[0]
		if (sc.Cache == nil) != (tt.want == nil) || (sc.Cache != nil && *sc.Cache != *tt.want) || sc.NoCache != tt.noCache {
			t.Errorf("%s: cache %+v, noCache %v; want %+v, %v", tt.cache, sc.Cache, sc.NoCache, tt.want, tt.noCache)
		}
	}
	bad := []struct{ cache, want string }{
		{`"yes"`, `line 1, column 59: mcpServers.s.cache: want true, false or an object such as {"ttl": "30s", "maxTtl": "10m", "maxEntries": 500}, not a string`},
		{`1`, `mcpServers.s.cache: want true, false or an object`},
		{`{"ttl": "soon"}`, `line 1, column 67: mcpServers.s.cache.ttl: want a number of seconds or a duration such as "30s": time: invalid duration "soon"`},
		{`{"maxTtl": "-1s"}`, `mcpServers.s.cache.maxTtl: negative duration "-1s"`},
		{`{"ttl": [1]}`, `mcpServers.s.cache.ttl: want a number of seconds or a duration such as "30s", not an array`},
		{`{"ttl": 1e300}`, `mcpServers.s.cache.ttl: 1e300 seconds is too long`},
		{`{"maxEntries": -1}`, `mcpServers.s.cache.maxEntries: want a number of entries (a whole number, 0 for the default of 1024), not -1`},
		{`{"maxEntries": 2.5}`, `mcpServers.s.cache.maxEntries: want a number of entries`},
		{`{"maxEntries": "500"}`, `mcpServers.s.cache.maxEntries: want a number of entries`},
		{`{"ttlMs": 5}`, `line 1, column 60: mcpServers.s.cache.ttlMs: unknown cache member "ttlMs"; want "ttl", "maxTtl" or "maxEntries"`},
		{`{"ttl": "1s", "ttl": "2s"}`, `mcpServers.s.cache.ttl: duplicate key "ttl"`},
	}
	for _, tt := range bad {
		_, err := ParseConfigEnv(doc(tt.cache), lookupTestEnv)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.cache, err, tt.want)
		}
	}
}

func TestServerConfigCache(t *testing.T) {
	store := NewMemoryCacheStore(1)
	base := &CacheConfig{DefaultTTL: time.Second, MaxTTL: time.Hour, Store: store}
	tests := []struct {
		name string
		sc   ServerConfig
		base *CacheConfig
		want *CacheConfig
	}{
		{"absent, no base", ServerConfig{}, nil, nil},
		{"absent keeps base", ServerConfig{}, base, base},
		{"false drops base", ServerConfig{NoCache: true}, base, nil},
		{"true, no base", ServerConfig{Cache: &CacheConfig{}}, nil, &CacheConfig{}},
		{"true keeps base", ServerConfig{Cache: &CacheConfig{}}, base, base},
		{"object over base", ServerConfig{Cache: &CacheConfig{MaxTTL: time.Minute, MaxEntries: 9}}, base,
			&CacheConfig{DefaultTTL: time.Second, MaxTTL: time.Minute, MaxEntries: 9, Store: store}},
	}
	for _, tt := range tests {
		got := tt.sc.cacheConfig(tt.base)
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
