package redisstore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

// proxied returns a client of srv through a new proxy. Its ReadTimeout
// is long (a minute), so that only the store's own timeouts can end a
// command that gets no answer.
func proxied(t testing.TB, srv *testdb.Server) (*redis.Client, *testdb.Proxy) {
	p := testdb.NewProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return rdb, p
}

// refresher is fn of an Update that plays a refresh at an authorization
// server that rotates refresh tokens: it takes a token another replica
// stored (a refresh token other than "rt-0"), or "refreshes" rt-0 into
// rt-1, counting the refreshes, taking as long as took.
type refresher struct {
	took      time.Duration
	refreshes atomic.Int32
	onRefresh func(ctx context.Context) // called during the refresh, if set
}

func (r *refresher) fn(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
	if cur != nil && cur.Token.RefreshToken != "rt-0" {
		return nil, nil // refreshed by another replica
	}
	r.refreshes.Add(1)
	if r.onRefresh != nil {
		r.onRefresh(ctx)
	}
	select {
	case <-time.After(r.took):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return token("at-1", "rt-1"), nil
}

func tokenStore(t testing.TB, rdb redis.UniversalClient, opts redisstore.TokenOptions) *redisstore.TokenStore {
	opts.Key = key32
	s, err := redisstore.NewTokenStore(rdb, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRefreshSlowerThanLockTTL: a refresh that takes twice the lock's
// TTL keeps its lock (extended while it runs), saves its token, and the
// other replica, waiting, takes it instead of refreshing the same token.
func TestRefreshSlowerThanLockTTL(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	opts := redisstore.TokenOptions{LockTTL: 300 * time.Millisecond}
	a, b := tokenStore(t, client(t, srv), opts), tokenStore(t, client(t, srv), opts)
	const url = "http://127.0.0.1:1/mcp"
	if err := a.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	r := &refresher{took: 600 * time.Millisecond}
	started := make(chan struct{})
	r.onRefresh = func(context.Context) { close(started) }
	errs := make(chan error, 2)
	go func() { errs <- a.Update(ctx, url, r.fn) }()
	<-started
	go func() { errs <- b.Update(ctx, url, r.fn) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := r.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes of rt-0, want 1", n)
	}
	if got, err := a.Load(ctx, url); err != nil || got.Token.RefreshToken != "rt-1" {
		t.Errorf("stored: %v %v, want rt-1", got, err)
	}
}

// TestLockReplyLost: the reply to the lock's first attempt is lost; the
// attempt sent again with the same owner finds the lock its own, instead
// of waiting the lock's TTL (a minute here) for itself.
func TestLockReplyLost(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb, p := proxied(t, srv)
	s := tokenStore(t, rdb, redisstore.TokenOptions{LockTTL: time.Minute, Options: redisstore.Options{Timeout: 300 * time.Millisecond}})
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	// Redis has the scripts already (as after any earlier refresh): the
	// reply dropped is the lock's, not a NOSCRIPT answer to its EVALSHA.
	if err := s.Update(ctx, "warm-up", (&refresher{}).fn); err != nil {
		t.Fatal(err)
	}
	p.DropNext(1)
	r := &refresher{}
	uctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Update(uctx, url, r.fn); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, url); got.Token.RefreshToken != "rt-1" {
		t.Errorf("stored %s, want rt-1", got.Token.RefreshToken)
	}
	if n := client(t, srv).Exists(ctx, "mcpadapter:token:{"+url+"}:lock").Val(); n != 0 {
		t.Error("the lock was left behind")
	}
}

// TestSaveReplyLost: the reply to the save is lost; the save sent again
// finds the token there and Update succeeds (not "lock lost", not a
// second write over another replica's).
func TestSaveReplyLost(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb, p := proxied(t, srv)
	s := tokenStore(t, rdb, redisstore.TokenOptions{Options: redisstore.Options{Timeout: 300 * time.Millisecond}})
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	// Redis has the scripts already: the reply dropped is the save's, not
	// a NOSCRIPT answer to its EVALSHA.
	if err := s.Update(ctx, "warm-up", (&refresher{}).fn); err != nil {
		t.Fatal(err)
	}
	r := &refresher{onRefresh: func(context.Context) { p.DropNext(1) }}
	if err := s.Update(ctx, url, r.fn); err != nil {
		t.Fatalf("Update with the save's reply lost: %v", err)
	}
	if got, _ := s.Load(ctx, url); got.Token.RefreshToken != "rt-1" {
		t.Errorf("stored %s, want rt-1", got.Token.RefreshToken)
	}
}

// TestSaveWhileRedisStalls: Redis stops answering while the refresh runs
// and answers again a moment later; the token is saved by a later attempt
// of the save, with the store's own context, although the caller's has
// ended.
func TestSaveWhileRedisStalls(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb, p := proxied(t, srv)
	s := tokenStore(t, rdb, redisstore.TokenOptions{Options: redisstore.Options{Timeout: 200 * time.Millisecond}})
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	uctx, cancel := context.WithCancel(ctx)
	err := s.Update(uctx, url, func(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
		p.Set(testdb.Stall)
		cancel() // the caller stops waiting: the save must not depend on it
		time.AfterFunc(300*time.Millisecond, func() { p.Set(testdb.Forward) })
		return token("at-1", "rt-1"), nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got, err := tokenStore(t, client(t, srv), redisstore.TokenOptions{}).Load(ctx, url); err != nil || got.Token.RefreshToken != "rt-1" {
		t.Errorf("stored %v %v, want rt-1", got, err)
	}
}

// TestLockLapsesMidRefresh: the replica holding the lock is cut off from
// Redis while it refreshes. Its refresh is stopped (fn's context ends)
// before the lock lapses, so the other replica's refresh, which starts
// once the lock has lapsed, never overlaps it.
func TestLockLapsesMidRefresh(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb, p := proxied(t, srv)
	opts := redisstore.TokenOptions{LockTTL: 600 * time.Millisecond, Options: redisstore.Options{Timeout: 100 * time.Millisecond}}
	a, b := tokenStore(t, rdb, opts), tokenStore(t, client(t, srv), opts)
	const url = "http://127.0.0.1:1/mcp"
	if err := a.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	aIn := make(chan struct{})
	errA := make(chan error, 1)
	go func() {
		errA <- a.Update(ctx, url, func(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
			note("a starts")
			p.Set(testdb.Stall)
			close(aIn)
			<-ctx.Done()
			note("a stopped")
			return nil, context.Cause(ctx)
		})
	}()
	<-aIn
	err := b.Update(ctx, url, func(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
		note("b starts")
		return token("at-1", "rt-1"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errA; err == nil || !strings.Contains(err.Error(), "could not be extended") {
		t.Errorf("a's Update: %v, want the lock's lapse", err)
	}
	p.Set(testdb.Forward)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(events, ", ") != "a starts, a stopped, b starts" {
		t.Errorf("events %q: the refreshes overlapped", events)
	}
}

// TestConnectionKilledMidRefresh: every connection of the refreshing
// replica is cut while it refreshes; go-redis reconnects, the lock is
// extended and the token saved.
func TestConnectionKilledMidRefresh(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb, p := proxied(t, srv)
	s := tokenStore(t, rdb, redisstore.TokenOptions{LockTTL: 2 * time.Second})
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	r := &refresher{took: 2 * time.Second, onRefresh: func(context.Context) {
		time.AfterFunc(50*time.Millisecond, p.Cut)
	}}
	if err := s.Update(ctx, url, r.fn); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, url); got.Token.RefreshToken != "rt-1" {
		t.Errorf("stored %s, want rt-1", got.Token.RefreshToken)
	}
}

// TestTokenChanged: a save whose read token was replaced meanwhile is
// refused with ErrTokenChanged (the compare-and-set), not written over.
func TestTokenChanged(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	s := tokenStore(t, client(t, srv), redisstore.TokenOptions{})
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, url, func(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
		// Another writer that did not take the lock (a plain Save).
		if err := s.Save(ctx, url, token("at-x", "rt-x")); err != nil {
			return nil, err
		}
		return token("at-1", "rt-1"), nil
	})
	if !errors.Is(err, mcpadapter.ErrTokenChanged) {
		t.Errorf("Update: %v, want ErrTokenChanged", err)
	}
	if got, _ := s.Load(ctx, url); got.Token.RefreshToken != "rt-x" {
		t.Errorf("stored %s, want the other writer's rt-x", got.Token.RefreshToken)
	}
}

// TestCacheMissesPromptly: Redis stops answering; a cache Get is a miss
// after the store's CacheTimeout although the client would wait a
// minute, and the log names the store and the address.
func TestCacheMissesPromptly(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb, p := proxied(t, srv)
	var logs syncBuffer
	s := redisstore.NewCacheStore(rdb, &redisstore.Options{CacheTimeout: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s.Set(ctx, "k", mcpadapter.CacheEntry{Value: []byte("{}"), Expires: time.Now().Add(time.Hour)})
	if _, ok := s.Get(ctx, "k"); !ok {
		t.Fatal("no hit before the stall")
	}
	p.Set(testdb.Stall)
	done := make(chan bool, 1)
	go func() { _, ok := s.Get(ctx, "k"); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a hit with Redis not answering")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Get still waiting 10 s after Redis stopped answering (CacheTimeout 200 ms)")
	}
	for _, want := range []string{"cache read failed", "redis " + p.Addr, "no answer within 200ms"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
	p.Set(testdb.Forward)
}

// TestCheckpointTimeout: a checkpoint Get against a Redis that stopped
// answering fails after Options.Timeout, naming the store and address.
func TestCheckpointTimeout(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb, p := proxied(t, srv)
	s := redisstore.NewCheckpointStore(rdb, &redisstore.Options{Timeout: 200 * time.Millisecond})
	p.Set(testdb.Stall)
	_, _, err := s.Get(ctx, "run")
	if err == nil || !strings.Contains(err.Error(), `reading checkpoint "run" from redis `+p.Addr) {
		t.Errorf("Get: %v", err)
	}
	p.Set(testdb.Forward)
}

// TestCheckpointLifetime: checkpoints expire after DefaultCheckpointTTL
// unless told otherwise; a negative CheckpointTTL keeps them.
func TestCheckpointLifetime(t *testing.T) {
	ctx := ctx30(t)
	rdb := client(t, testdb.Redis(t))
	def := redisstore.NewCheckpointStore(rdb, nil)
	keep := redisstore.NewCheckpointStore(rdb, &redisstore.Options{Prefix: "keep:", CheckpointTTL: -1})
	for _, s := range []*redisstore.CheckpointStore{def, keep} {
		if err := s.Set(ctx, "run", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if ttl := rdb.PTTL(ctx, "mcpadapter:checkpoint:run").Val(); ttl <= redisstore.DefaultCheckpointTTL-time.Minute || ttl > redisstore.DefaultCheckpointTTL {
		t.Errorf("default PTTL %v, want %v", ttl, redisstore.DefaultCheckpointTTL)
	}
	if ttl := rdb.PTTL(ctx, "keep:checkpoint:run").Val(); ttl != -1 {
		t.Errorf("CheckpointTTL -1: PTTL %v, want none (-1ns)", ttl)
	}
}

// TestRelativeExpiries: every expiry the stores set is relative (PX,
// PEXPIRE), so a Redis clock ahead of or behind the client's does not
// change it; MONITOR shows what was sent.
func TestRelativeExpiries(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb := client(t, srv)
	mon, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	if _, err := mon.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(mon)
	if l, err := lines.ReadString('\n'); err != nil || !strings.HasPrefix(l, "+OK") {
		t.Fatalf("MONITOR: %q %v", l, err)
	}
	redisstore.NewCacheStore(rdb, nil).Set(ctx, "k", mcpadapter.CacheEntry{Value: []byte("{}"), Expires: time.Now().Add(time.Hour)})
	if err := redisstore.NewCheckpointStore(rdb, nil).Set(ctx, "run", []byte("x")); err != nil {
		t.Fatal(err)
	}
	s := tokenStore(t, rdb, redisstore.TokenOptions{LockTTL: 300 * time.Millisecond})
	if err := s.Update(ctx, "http://x/mcp", (&refresher{took: 250 * time.Millisecond}).fn); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "end-of-test", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var sent []string
	_ = mon.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("reading MONITOR: %v (so far %q)", err, sent)
		}
		if strings.Contains(l, "end-of-test") {
			break
		}
		sent = append(sent, strings.ToLower(l))
	}
	all := strings.Join(sent, "")
	for _, want := range []string{`"set" "mcpadapter:cache:k"`, `"px"`, `"pexpire"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s among the commands sent:\n%s", want, all)
		}
	}
	for _, bad := range []string{`"pxat"`, `"exat"`, `"pexpireat"`, `"expireat"`} {
		if strings.Contains(all, bad) {
			t.Errorf("an absolute expiry (%s) was sent:\n%s", bad, all)
		}
	}
}

// TestRingDeletePrefix: on a Ring of three servers, DeletePrefix removes
// the entries of every shard.
func TestRingDeletePrefix(t *testing.T) {
	ctx := ctx30(t)
	addrs := map[string]string{}
	for i := range 3 {
		addrs[fmt.Sprint("shard", i)] = testdb.Redis(t).Addr
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: addrs})
	t.Cleanup(func() { ring.Close() })
	testDeletePrefix(ctx, t, ring)
}

// TestCluster: on a Redis Cluster of three masters, DeletePrefix removes
// the entries of every master, and a token and its lock share a slot
// whatever the prefix (an unmatched "{" included); a prefix or key that
// would give an empty hash tag is refused.
func TestCluster(t *testing.T) {
	ctx := ctx30(t)
	nodes := testdb.RedisCluster(t, 3)
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.Addr)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { cc.Close() })
	testDeletePrefix(ctx, t, cc)

	for _, prefix := range []string{"odd{", "a}b{c:", "{tenant}:", "plain:"} {
		s, err := redisstore.NewTokenStore(cc, &redisstore.TokenOptions{Key: key32, Options: redisstore.Options{Prefix: prefix}})
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		for _, url := range []string{"http://127.0.0.1:1/mcp", "x}y", "{"} {
			if err := s.Save(ctx, url, token("at-0", "rt-0")); err != nil {
				t.Fatalf("prefix %q, key %q: %v", prefix, url, err)
			}
			if err := s.Update(ctx, url, (&refresher{}).fn); err != nil {
				t.Errorf("prefix %q, key %q: Update: %v", prefix, url, err)
			}
		}
	}
	if _, err := redisstore.NewTokenStore(cc, &redisstore.TokenOptions{Key: key32, Options: redisstore.Options{Prefix: "a{}"}}); err == nil || !strings.Contains(err.Error(), "hash tag") {
		t.Errorf(`prefix "a{}": %v, want a refusal naming the hash tag`, err)
	}
	s := tokenStore(t, cc, redisstore.TokenOptions{})
	if err := s.Update(ctx, "", (&refresher{}).fn); err == nil || !strings.Contains(err.Error(), "hash tag") {
		t.Errorf("empty key: %v, want a refusal naming the hash tag", err)
	}
}

// testDeletePrefix stores 400 entries under one prefix and 10 under
// another, deletes the first prefix and checks what is left, on every
// node of c.
func testDeletePrefix(ctx context.Context, t *testing.T, c redis.UniversalClient) {
	t.Helper()
	s := redisstore.NewCacheStore(c, nil)
	exp := time.Now().Add(time.Hour)
	for i := range 400 {
		s.Set(ctx, fmt.Sprintf("srv1|tools/list|%d", i), mcpadapter.CacheEntry{Value: []byte("{}"), Expires: exp})
	}
	for i := range 10 {
		s.Set(ctx, fmt.Sprintf("srv2|tools/list|%d", i), mcpadapter.CacheEntry{Value: []byte("{}"), Expires: exp})
	}
	count := func(prefix string) int {
		n := 0
		for i := range 400 {
			if _, ok := s.Get(ctx, fmt.Sprintf("%s|tools/list|%d", prefix, i)); ok {
				n++
			}
		}
		return n
	}
	if n := count("srv1"); n != 400 {
		t.Fatalf("%d of 400 entries stored", n)
	}
	s.DeletePrefix(ctx, "srv1|")
	if n := count("srv1"); n != 0 {
		t.Errorf("%d of 400 entries survived DeletePrefix", n)
	}
	if n := count("srv2"); n != 10 {
		t.Errorf("%d of 10 entries under another prefix left, want 10", n)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
