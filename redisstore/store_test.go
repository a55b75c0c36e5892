package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
	"golang.org/x/oauth2"
)

func ctx30(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func client(t testing.TB, srv *testdb.Server) *redis.Client {
	opts, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries = -1 // a stopped server fails at once
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestCheckpointStore: a checkpoint written before Redis stops is there
// once it is back; while it is away, Get and Set say so and where.
func TestCheckpointStore(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	s := redisstore.NewCheckpointStore(client(t, srv), nil)
	if _, ok, err := s.Get(ctx, "run-1"); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	if err := s.Set(ctx, "run-1", []byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Get(ctx, "run-1")
	if err == nil || !strings.Contains(err.Error(), `reading checkpoint "run-1" from redis `+srv.Addr) {
		t.Errorf("Get with Redis stopped: %v", err)
	}
	if err := s.Set(ctx, "run-2", []byte("x")); err == nil || !strings.Contains(err.Error(), srv.Addr) {
		t.Errorf("Set with Redis stopped: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	b, ok, err := s.Get(ctx, "run-1")
	if err != nil || !ok || string(b) != "state" {
		t.Errorf("after the restart: %q %v %v", b, ok, err)
	}
	if err := s.Delete(ctx, "run-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, "run-1"); ok {
		t.Error("deleted checkpoint still there")
	}
}

// TestCacheStore: Redis holds the expiry; DeletePrefix removes exactly the
// keys under a prefix, glob characters included.
func TestCacheStore(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb := client(t, srv)
	s := redisstore.NewCacheStore(rdb, &redisstore.Options{Prefix: "t:"})
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	for _, k := range []string{"srv*1|tools/list|", "srv*1|tools/list|page2", "srv*1|prompts/list|", "srv21|tools/list|", "srv*1|tools/list\x00|"} {
		s.Set(ctx, k, mcpadapter.CacheEntry{Value: []byte(`{"k":"` + k + `"}`), Expires: exp})
	}
	e, ok := s.Get(ctx, "srv*1|tools/list|")
	if !ok || !e.Expires.Equal(exp) || string(e.Value) != `{"k":"srv*1|tools/list|"}` {
		t.Fatalf("Get: %v %+v", ok, e)
	}
	if ttl := rdb.PTTL(ctx, "t:cache:srv*1|tools/list|").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("Redis holds no expiry for the entry: PTTL %v", ttl)
	}
	s.DeletePrefix(ctx, "srv*1|tools/list|")
	for k, want := range map[string]bool{"srv*1|tools/list|": false, "srv*1|tools/list|page2": false, "srv*1|tools/list\x00|": true, "srv*1|prompts/list|": true, "srv21|tools/list|": true} {
		if _, ok := s.Get(ctx, k); ok != want {
			t.Errorf("after DeletePrefix, %q present: %v, want %v", k, ok, want)
		}
	}
	s.Set(ctx, "past", mcpadapter.CacheEntry{Value: []byte("{}"), Expires: time.Now().Add(-time.Second)})
	if _, ok := s.Get(ctx, "past"); ok {
		t.Error("an expired entry was stored")
	}
	s.Delete(ctx, "srv21|tools/list|")
	if _, ok := s.Get(ctx, "srv21|tools/list|"); ok {
		t.Error("Delete left the entry")
	}
}

var key32 = bytes.Repeat([]byte{42}, 32)

func token(access, refresh string) *mcpadapter.StoredToken {
	return &mcpadapter.StoredToken{Token: &oauth2.Token{AccessToken: access, RefreshToken: refresh}, ClientID: "c", TokenURL: "http://127.0.0.1/token"}
}

// TestTokenStore: tokens are sealed at rest, a store without a key
// refuses to start, and concurrent Updates from several stores (as from
// several replicas) lose none of each other's writes.
func TestTokenStore(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb := client(t, srv)
	if _, err := redisstore.NewTokenStore(rdb, nil); err == nil || !strings.Contains(err.Error(), "no encryption key") {
		t.Errorf("no key: %v", err)
	}
	s, err := redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: key32})
	if err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-secret", "rt-secret")); err != nil {
		t.Fatal(err)
	}
	raw := rdb.Get(ctx, "mcpadapter:token:{"+url+"}").Val()
	if raw == "" || strings.Contains(raw, "secret") {
		t.Fatalf("stored form: %q", raw)
	}
	got, err := s.Load(ctx, url)
	if err != nil || got.Token.AccessToken != "at-secret" || got.Token.RefreshToken != "rt-secret" {
		t.Fatalf("Load: %v %v", got, err)
	}
	other, _ := redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: bytes.Repeat([]byte{1}, 32)})
	if _, err := other.Load(ctx, url); err == nil || !strings.Contains(err.Error(), "another key") {
		t.Errorf("Load with another key: %v", err)
	}

	// 8 replicas each add 5 to a counter kept in the token, at once.
	const replicas, rounds = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, replicas*rounds)
	for i := range replicas {
		st, _ := redisstore.NewTokenStore(client(t, srv), &redisstore.TokenOptions{Key: key32})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				errs <- st.Update(ctx, url, func(_ context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
					n := 0
					fmt.Sscanf(cur.Token.AccessToken, "n%d", &n)
					return token(fmt.Sprintf("n%d", n+1), fmt.Sprintf("rt-%d", i)), nil
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, _ = s.Load(ctx, url)
	if got.Token.AccessToken != fmt.Sprintf("n%d", replicas*rounds) {
		t.Errorf("after %d concurrent updates: %s", replicas*rounds, got.Token.AccessToken)
	}
	// An error from fn saves nothing and releases the lock.
	boom := errors.New("refresh refused")
	if err := s.Update(ctx, url, func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("Update: %v", err)
	}
	if err := s.Update(ctx, url, func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) { return nil, nil }); err != nil {
		t.Errorf("Update after a failed one: %v", err)
	}
}

// TestStoreAway: with Redis stopped, the cache misses and logs why and
// where (calls go to the server), and checkpoints written with
// CheckpointTTL carry Redis's expiry.
func TestStoreAway(t *testing.T) {
	ctx := ctx30(t)
	srv := testdb.Redis(t)
	rdb := client(t, srv)
	var logs bytes.Buffer
	s := redisstore.NewCacheStore(rdb, &redisstore.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	cp := redisstore.NewCheckpointStore(rdb, &redisstore.Options{CheckpointTTL: time.Hour})
	if err := cp.Set(ctx, "run", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "mcpadapter:checkpoint:run").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("checkpoint PTTL %v, want up to an hour", ttl)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	s.Set(ctx, "k", mcpadapter.CacheEntry{Value: []byte("{}"), Expires: time.Now().Add(time.Hour)})
	if _, ok := s.Get(ctx, "k"); ok {
		t.Error("a hit with Redis stopped")
	}
	for _, want := range []string{"cache write failed", "cache read failed", "redis " + srv.Addr} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
}
