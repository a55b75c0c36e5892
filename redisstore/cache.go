package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/redis/go-redis/v9"
)

// CacheStore is an mcpadapter.CacheStore in Redis: give it to
// mcpadapter.CacheConfig.Store of every replica, and a "public" result
// one replica fetched is a hit in the others. Redis drops each entry when
// it expires (a relative PX, so the server's clock does not matter).
// Errors (Redis unreachable, or slower than Options.CacheTimeout) are
// logged and the cache misses: a call goes to the server instead.
type CacheStore struct {
	r       runner
	prefix  string
	log     *slog.Logger
	timeout time.Duration // one Get, Set or Delete
	batch   time.Duration // one round trip of DeletePrefix
}

var _ mcpadapter.CacheStore = (*CacheStore)(nil)

// scanBatch is how many keys one SCAN of DeletePrefix asks for.
const scanBatch = 500

// NewCacheStore returns a CacheStore on rdb (a *redis.Client, a
// *redis.Ring or a *redis.ClusterClient). It sends nothing until used.
func NewCacheStore(rdb redis.UniversalClient, opts *Options) *CacheStore {
	return &CacheStore{r: newRunner(rdb), prefix: opts.prefix() + "cache:", log: opts.logger(),
		timeout: opts.cacheTimeout(), batch: opts.timeout()}
}

// Get returns the entry stored under key, if any.
func (s *CacheStore) Get(ctx context.Context, key string) (mcpadapter.CacheEntry, bool) {
	b, err := call(s.r, ctx, s.timeout, func(ctx context.Context) ([]byte, error) {
		return s.r.rdb.Get(ctx, s.prefix+key).Bytes()
	})
	if errors.Is(err, redis.Nil) {
		return mcpadapter.CacheEntry{}, false
	}
	if err != nil {
		s.log.WarnContext(ctx, "redisstore: cache read failed; calling the server", "store", s.r.where, "err", err)
		return mcpadapter.CacheEntry{}, false
	}
	if len(b) < 8 {
		s.log.WarnContext(ctx, "redisstore: cache entry too short; ignored", "store", s.r.where, "key", s.prefix+key)
		return mcpadapter.CacheEntry{}, false
	}
	exp := time.UnixMilli(int64(binary.BigEndian.Uint64(b)))
	return mcpadapter.CacheEntry{Value: b[8:], Expires: exp}, true
}

// Set stores e under key until e.Expires. An entry already expired is
// not stored.
func (s *CacheStore) Set(ctx context.Context, key string, e mcpadapter.CacheEntry) {
	ttl := time.Until(e.Expires)
	if ttl < time.Millisecond {
		return
	}
	b := make([]byte, 8, 8+len(e.Value))
	binary.BigEndian.PutUint64(b, uint64(e.Expires.UnixMilli()))
	b = append(b, e.Value...)
	err := s.r.do(ctx, s.timeout, func(ctx context.Context) error {
		return s.r.rdb.Set(ctx, s.prefix+key, b, ttl).Err()
	})
	if err != nil {
		s.log.WarnContext(ctx, "redisstore: cache write failed", "store", s.r.where, "err", err)
	}
}

// Delete removes the entry stored under key, if any.
func (s *CacheStore) Delete(ctx context.Context, key string) {
	err := s.r.do(ctx, s.timeout, func(ctx context.Context) error {
		return s.r.rdb.Del(ctx, s.prefix+key).Err()
	})
	if err != nil {
		s.log.WarnContext(ctx, "redisstore: cache delete failed", "store", s.r.where, "err", err)
	}
}

// DeletePrefix removes every entry whose key starts with prefix (SCAN
// MATCH and UNLINK, a batch at a time, each round trip bounded by
// Options.Timeout): on every shard of a *redis.Ring and every master of
// a *redis.ClusterClient. Another type of client is refused (logged): it
// could hide shards a SCAN would not reach.
func (s *CacheStore) DeletePrefix(ctx context.Context, prefix string) {
	if err := s.deletePrefix(ctx, s.prefix+prefix); err != nil {
		s.log.ErrorContext(ctx, "redisstore: cache invalidation failed", "store", s.r.where, "prefix", prefix, "err", err)
	}
}

func (s *CacheStore) deletePrefix(ctx context.Context, prefix string) error {
	match := globEscape(prefix) + "*"
	switch c := s.r.rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return s.scanDelete(ctx, n, match)
		})
	case *redis.Ring:
		return c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
			return s.scanDelete(ctx, n, match)
		})
	case *redis.Client:
		return s.scanDelete(ctx, c, match)
	}
	return fmt.Errorf("DeletePrefix needs a *redis.Client, *redis.Ring or *redis.ClusterClient, not a %T", s.r.rdb)
}

// scanDelete unlinks the keys of one server matching match, one SCAN
// batch at a time.
func (s *CacheStore) scanDelete(ctx context.Context, c *redis.Client, match string) error {
	var cursor uint64
	for {
		page, err := call(s.r, ctx, s.batch, func(ctx context.Context) (scanPage, error) {
			keys, next, err := c.Scan(ctx, cursor, match, scanBatch).Result()
			return scanPage{keys, next}, err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		keys, next := page.keys, page.next
		if len(keys) > 0 {
			err := s.r.do(ctx, s.batch, func(ctx context.Context) error {
				// One key per command (in a cluster keys live in different
				// slots), the batch in one pipeline.
				_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
					for _, k := range keys {
						p.Unlink(ctx, k)
					}
					return nil
				})
				return err
			})
			if err != nil {
				return fmt.Errorf("%s: %w", c.Options().Addr, err)
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// scanPage is one SCAN reply.
type scanPage struct {
	keys []string
	next uint64
}

// globEscape quotes the characters SCAN MATCH treats as a pattern.
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\^-`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\^-`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
