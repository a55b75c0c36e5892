package replicatest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

// The stores fit eino's interfaces by their method sets: the store
// modules do not import eino.
var (
	_ adk.CheckPointStore     = (*redisstore.CheckpointStore)(nil)
	_ adk.CheckPointStore     = (*pgstore.CheckpointStore)(nil)
	_ compose.CheckPointStore = (*redisstore.CheckpointStore)(nil)
	_ compose.CheckPointStore = (*pgstore.CheckpointStore)(nil)
)

// tokenKey is the encryption key every replica of the tests shares.
var tokenKey = bytes.Repeat([]byte{0x5e}, 32)

// stores is one replica's view of the shared store.
type stores struct {
	checkpoints adk.CheckPointStore
	cache       mcpadapter.CacheStore
	tokens      mcpadapter.TokenUpdater
	close       func()
}

// openStores connects to the store of kind ("redis" or "postgres") at url.
func openStores(ctx context.Context, kind, url string) (*stores, error) {
	switch kind {
	case "redis":
		opts, err := redis.ParseURL(url)
		if err != nil {
			return nil, err
		}
		opts.MaxRetries = -1
		rdb := redis.NewClient(opts)
		tok, err := redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: tokenKey})
		if err != nil {
			rdb.Close()
			return nil, err
		}
		return &stores{
			checkpoints: redisstore.NewCheckpointStore(rdb, nil),
			cache:       redisstore.NewCacheStore(rdb, nil),
			tokens:      tok,
			close:       func() { rdb.Close() },
		}, nil
	case "postgres":
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return nil, err
		}
		s, err := openPG(ctx, pool)
		if err != nil {
			pool.Close()
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown store %q", kind)
}

func openPG(ctx context.Context, pool *pgxpool.Pool) (*stores, error) {
	cp, err := pgstore.NewCheckpointStore(ctx, pool, nil)
	if err != nil {
		return nil, err
	}
	cache, err := pgstore.NewCacheStore(ctx, pool, nil)
	if err != nil {
		return nil, err
	}
	tok, err := pgstore.NewTokenStore(ctx, pool, &pgstore.TokenOptions{Key: tokenKey})
	if err != nil {
		cache.Close()
		return nil, err
	}
	return &stores{checkpoints: cp, cache: cache, tokens: tok, close: func() { cache.Close(); pool.Close() }}, nil
}

// mustOpen opens the stores for a test in this process.
func mustOpen(t testing.TB, kind, url string) *stores {
	t.Helper()
	s, err := openStores(context.Background(), kind, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}
