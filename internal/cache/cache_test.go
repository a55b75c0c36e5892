package cache

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCacheTTLPolicy(t *testing.T) {
	t.Parallel()
	rc := &Cache{defaultTTL: 30 * time.Second}
	capped := &Cache{defaultTTL: time.Hour, maxTTL: time.Minute}
	tests := []struct {
		rc          *Cache
		ttlMs       int
		scope       string
		identity    bool
		want        time.Duration
		wantPrivate bool
	}{
		{rc, 60000, "public", false, time.Minute, false},
		{rc, 60000, "private", false, time.Minute, true},
		{rc, 60000, "", false, time.Minute, false}, // the protocol's default scope
		{rc, 60000, "team", false, time.Minute, true},
		{rc, 0, "public", false, 0, false},
		{rc, 0, "private", false, 0, false},
		{rc, -5, "", false, 0, false},
		{rc, 0, "", false, 30 * time.Second, true}, // no hints: DefaultTTL, private
		{&Cache{}, 0, "", false, 0, true},
		{capped, 3600000, "public", false, time.Minute, false},
		{capped, 1000, "public", false, time.Second, false},
		{capped, 0, "", false, time.Minute, true},
		{rc, int(^uint(0) >> 1), "public", false, 1<<63 - 1, false},
		{rc, 60000, "", true, time.Minute, true}, // for a principal: private unless said public
		{rc, 60000, "public", true, time.Minute, false},
		{rc, 60000, "private", true, time.Minute, true},
	}
	for _, tt := range tests {
		got, private := tt.rc.ttl(tt.ttlMs, tt.scope, tt.identity)
		if got != tt.want || (got > 0 && private != tt.wantPrivate) {
			t.Errorf("ttl(%d, %q, identity %v) with default %v, max %v = %v, %v; want %v, %v",
				tt.ttlMs, tt.scope, tt.identity, tt.rc.defaultTTL, tt.rc.maxTTL, got, private, tt.want, tt.wantPrivate)
		}
	}
}

func TestCacheIdentity(t *testing.T) {
	t.Parallel()
	web := Server{HTTP: true, URL: "https://api.example.com/mcp?key=s3cret"}
	part := func(c Credentials) string { c.Known = true; return PrivatePartition(web, c) }

	alice := part(Credentials{Token: "alice-token"})
	if alice != part(Credentials{Token: "alice-token"}) {
		t.Error("the same token gives two partitions")
	}
	if alice == part(Credentials{Token: "bob-token"}) || alice == part(Credentials{}) {
		t.Error("different tokens share a partition")
	}
	h1 := part(Credentials{Headers: map[string]string{"X-Api-Key": "k1", "x-tenant": "a"}})
	if h1 != part(Credentials{Headers: map[string]string{"x-api-key": "k1", "X-Tenant": "a"}}) {
		t.Error("header names in another case give another partition")
	}
	if h1 == part(Credentials{Headers: map[string]string{"X-Api-Key": "k2", "X-Tenant": "a"}}) {
		t.Error("different header values share a partition")
	}
	// Identities this package cannot see are never shared.
	unknown := Credentials{Token: "t"}
	if first, second := PrivatePartition(web, unknown), PrivatePartition(web, unknown); first == second {
		t.Error("credentials not all known: two clients share a partition")
	}

	rc := &Cache{server: serverID(web, "h"), private: alice}
	for _, k := range []string{rc.key(methodListTools, "", alice), rc.key(methodReadResource, "file:///x", publicPartition)} {
		if strings.Contains(k, "alice-token") || strings.Contains(k, "s3cret") {
			t.Errorf("key %q holds a secret", k)
		}
		if !strings.HasPrefix(k, cacheKeyVersion+"\x00") {
			t.Errorf("key %q lacks the version", k)
		}
	}
	cmd := func(env ...string) string {
		return serverID(Server{Stdio: true, Path: "srv", Args: []string{"a b"}, Env: env}, "h")
	}
	if cmd("A=1", "B=2") != cmd("B=2", "A=1") || cmd("A=1") == cmd("A=2") {
		t.Error("stdio identity does not follow the command's environment")
	}
	inherit := func(names ...string) string {
		return serverID(Server{Stdio: true, Path: "srv", InheritEnv: names}, "h")
	}
	if inherit("A", "B") != inherit("B", "A") || inherit("A") == inherit("B") || inherit() != serverID(Server{Stdio: true, Path: "srv"}, "h") {
		t.Error("stdio identity does not follow the variables the server inherits")
	}
	if serverID(Server{Stdio: true, Path: "srv", Args: []string{"a", "b"}}, "h") == cmd() {
		t.Error("args [a b] and [a b] joined hash alike")
	}
	inproc := Server{}
	if first, second := serverID(inproc, "h"), serverID(inproc, "h"); first == second {
		t.Error("in-process servers share an identity")
	}
}

func TestCacheKeyPrefixes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := &Cache{store: NewMemoryStore(0), server: "s1", private: "u1"}
	other := &Cache{store: rc.store, server: "s2", private: "u1"}
	e := Entry{Value: []byte(`{}`), Expires: time.Now().Add(time.Hour)}
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
	t.Parallel()
	ctx := context.Background()
	s := NewMemoryStore(2).(*memoryStore)
	fresh := Entry{Value: []byte("1"), Expires: time.Now().Add(time.Hour)}
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
	s.Set(ctx, "a", Entry{Value: []byte("2"), Expires: time.Now().Add(-time.Second)})
	if _, ok := s.Get(ctx, "a"); ok || s.Len() != 1 {
		t.Errorf("an expired entry was served or kept (%d entries)", s.Len())
	}
	s.Delete(ctx, "c")
	s.Delete(ctx, "missing")
	if s.Len() != 0 {
		t.Errorf("%d entries after deleting all", s.Len())
	}
	if d := NewMemoryStore(0).(*memoryStore); d.max != DefaultEntries {
		t.Errorf("default size %d", d.max)
	}
}

// TestCacheLocalIdentity: the private entries of stdio and in-process
// servers are the Client's alone, and a stdio server is known by what
// really runs: the executable PATH finds, the absolute working directory,
// the host.
func TestCacheLocalIdentity(t *testing.T) {
	stdio := Server{Stdio: true, Path: "srv"}
	for _, srv := range []Server{stdio, {}} {
		first, second := PrivatePartition(srv, Credentials{Known: true}), PrivatePartition(srv, Credentials{Known: true})
		if first == second {
			t.Errorf("%+v: two clients share the private partition %q", srv, first)
		}
	}

	host := "host-1"
	type Command struct {
		Path string
		Dir  string
	}
	id := func(c Command) string { return serverID(Server{Stdio: true, Path: c.Path, Dir: c.Dir}, host) }

	// The working directory, when Dir is "", and a relative Dir.
	a, b := t.TempDir(), t.TempDir()
	t.Chdir(a)
	inA := id(Command{Path: "/bin/srv"})
	if inA != id(Command{Path: "/bin/srv", Dir: a}) {
		t.Error(`Dir "" and Dir = the working directory give two identities`)
	}
	relA := id(Command{Path: "/bin/srv", Dir: "sub"})
	if relA != id(Command{Path: "/bin/srv", Dir: filepath.Join(a, "sub")}) {
		t.Error("a relative Dir and its absolute form give two identities")
	}
	t.Chdir(b)
	if id(Command{Path: "/bin/srv"}) == inA || id(Command{Path: "/bin/srv", Dir: "sub"}) == relA {
		t.Error("the same command run from two directories has one identity")
	}

	// The executable PATH finds.
	bin1, bin2 := t.TempDir(), t.TempDir()
	for _, dir := range []string{bin1, bin2} {
		if err := os.WriteFile(filepath.Join(dir, "mcp-srv-test"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin1)
	in1 := id(Command{Path: "mcp-srv-test"})
	if in1 != id(Command{Path: "mcp-srv-test"}) {
		t.Error("one command, two identities")
	}
	t.Setenv("PATH", bin2)
	if id(Command{Path: "mcp-srv-test"}) == in1 {
		t.Error("two executables found in PATH under one name share an identity")
	}
	if got, want := resolveExecutable("mcp-srv-test", b), filepath.Join(bin2, "mcp-srv-test"); got != want {
		t.Errorf("resolveExecutable = %q, want %q", got, want)
	}
	if got, want := resolveExecutable("./srv", "/opt/x"), "/opt/x/srv"; got != want {
		t.Errorf("resolveExecutable(./srv) = %q, want %q", got, want)
	}

	// The host, for stdio servers and local URLs only.
	host = "host-1"
	local := []string{"http://localhost:8080/mcp", "http://127.0.0.1:9/mcp", "http://[::1]:9/mcp", "http://app.localhost/mcp", "http://0.0.0.0:1/"}
	remote := "https://api.example.com/mcp"
	before := map[string]string{"stdio": id(Command{Path: "/bin/srv"}), remote: serverID(Server{HTTP: true, URL: remote}, host)}
	for _, u := range local {
		before[u] = serverID(Server{HTTP: true, URL: u}, host)
	}
	host = "host-2"
	if id(Command{Path: "/bin/srv"}) == before["stdio"] {
		t.Error("one command on two hosts has one identity")
	}
	for _, u := range local {
		if serverID(Server{HTTP: true, URL: u}, host) == before[u] {
			t.Errorf("%s on two hosts has one identity", u)
		}
	}
	if serverID(Server{HTTP: true, URL: remote}, host) != before[remote] {
		t.Errorf("%s depends on the host asking", remote)
	}
	for u, want := range map[string]bool{
		"http://LOCALHOST./x": true, "http://127.1.2.3/": true, "http://10.0.0.1/": false,
		"https://localhost.example.com/": false, "::bad": false,
	} {
		if got := isLocalURL(u); got != want {
			t.Errorf("isLocalURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// hookStore runs beforeSet before each Set.
type hookStore struct {
	Store
	beforeSet func()
}

func (s *hookStore) Set(ctx context.Context, key string, e Entry) {
	if s.beforeSet != nil {
		s.beforeSet()
	}
	s.Store.Set(ctx, key, e)
}

// TestCacheGenerations: an answer is not stored when its listing or
// resource was invalidated while it was on its way, even when the
// invalidation lands between the check and the Set.
func TestCacheGenerations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &hookStore{Store: NewMemoryStore(0)}
	rc := &Cache{store: store, server: "s", private: "p", log: slog.New(slog.DiscardHandler)}
	read := func(uri string) cacheRequest { return cacheRequest{method: methodReadResource, param: uri, ok: true} }
	stored := func(cr cacheRequest) bool {
		_, ok := store.Get(ctx, rc.key(cr.method, cr.param, publicPartition))
		return ok
	}
	// flight stores an answer to cr, with during run while it is on its way.
	flight := func(cr cacheRequest, during func()) bool {
		store.Delete(ctx, rc.key(cr.method, cr.param, publicPartition))
		gen := rc.generation(cr)
		if during != nil {
			during()
		}
		var res mcp.Result = &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: cr.param, Text: "x"}}}
		if cr.method == methodListPrompts {
			res = &mcp.ListPromptsResult{}
		}
		rc.put(ctx, cr, gen, res, 60000, "public", true)
		return stored(cr)
	}

	prompts := cacheRequest{method: methodListPrompts, ok: true}
	if !flight(prompts, nil) {
		t.Fatal("a quiet answer was not stored")
	}
	rc.invalidate(ctx, methodListPrompts)
	if flight(prompts, func() { rc.invalidate(ctx, methodListPrompts) }) {
		t.Error("an answer from before prompts/list_changed was stored")
	}
	if !flight(prompts, func() { rc.invalidate(ctx, methodListTools) }) {
		t.Error("another method's list_changed kept an answer from being stored")
	}

	// Per resource: an update drops the answers under its URI only.
	under, other := read("file:///a/b"), read("file:///c")
	if flight(under, func() { rc.invalidateResource(ctx, "file:///a/") }) {
		t.Error("a read from before its resource's update was stored")
	}
	if !flight(other, func() { rc.invalidateResource(ctx, "file:///a/") }) {
		t.Error("another resource's update kept a read from being stored")
	}
	if !flight(under, nil) {
		t.Error("a read after the update was not stored")
	}

	// The invalidation lands after the check, and its DeletePrefix before
	// the Set: the entry is deleted after the Set.
	rc.invalidate(ctx, methodListPrompts)
	store.beforeSet = func() { store.beforeSet = nil; rc.invalidate(ctx, methodListPrompts) }
	if flight(prompts, nil) {
		t.Error("an answer invalidated just before its Set was kept")
	}
	store.beforeSet = func() { store.beforeSet = nil; rc.invalidateResource(ctx, "file:///c") }
	if flight(other, nil) {
		t.Error("a read invalidated just before its Set was kept")
	}

	// Past maxResourceGens updated URIs every read in flight is dropped,
	// and the generations stay bounded.
	if flight(other, func() {
		for i := range maxResourceGens + 1 {
			rc.bumpResource(fmt.Sprintf("file:///many/%d", i))
		}
	}) {
		t.Error("a read in flight survived the reset of the resource generations")
	}
	if n := len(rc.resGens); n > maxResourceGens {
		t.Errorf("%d resource generations kept", n)
	}
	if !flight(other, nil) {
		t.Error("a read after the reset was not stored")
	}
}
