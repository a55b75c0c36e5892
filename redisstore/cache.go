package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/redis/go-redis/v9"
)

// CacheStore is an mcpadapter.CacheStore in Redis: give it to
// mcpadapter.CacheConfig.Store of every replica, and a "public" result
// one replica fetched is a hit in the others. Redis drops each entry when
// it expires (PXAT). Errors (Redis unreachable) are logged and the cache
// misses: a call goes to the server instead.
type CacheStore struct {
	rdb    redis.UniversalClient
	prefix string
	log    *slog.Logger
	where  string
}

var _ mcpadapter.CacheStore = (*CacheStore)(nil)

// scanBatch is how many keys one SCAN of DeletePrefix asks for.
const scanBatch = 500

// NewCacheStore returns a CacheStore on rdb. It sends nothing until used.
func NewCacheStore(rdb redis.UniversalClient, opts *Options) *CacheStore {
	return &CacheStore{rdb: rdb, prefix: opts.prefix() + "cache:", log: opts.logger(), where: where(rdb)}
}

// Get returns the entry stored under key, if any.
func (s *CacheStore) Get(ctx context.Context, key string) (mcpadapter.CacheEntry, bool) {
	b, err := s.rdb.Get(ctx, s.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return mcpadapter.CacheEntry{}, false
	}
	if err != nil {
		s.log.WarnContext(ctx, "redisstore: cache read failed; calling the server", "store", s.where, "err", err)
		return mcpadapter.CacheEntry{}, false
	}
	if len(b) < 8 {
		s.log.WarnContext(ctx, "redisstore: cache entry too short; ignored", "store", s.where, "key", s.prefix+key)
		return mcpadapter.CacheEntry{}, false
	}
	exp := time.UnixMilli(int64(binary.BigEndian.Uint64(b)))
	return mcpadapter.CacheEntry{Value: b[8:], Expires: exp}, true
}

// Set stores e under key until e.Expires. An entry already expired is
// not stored.
func (s *CacheStore) Set(ctx context.Context, key string, e mcpadapter.CacheEntry) {
	if !time.Now().Before(e.Expires) {
		return
	}
	b := make([]byte, 8, 8+len(e.Value))
	binary.BigEndian.PutUint64(b, uint64(e.Expires.UnixMilli()))
	b = append(b, e.Value...)
	err := s.rdb.SetArgs(ctx, s.prefix+key, b, redis.SetArgs{ExpireAt: e.Expires}).Err()
	if err != nil {
		s.log.WarnContext(ctx, "redisstore: cache write failed", "store", s.where, "err", err)
	}
}

// Delete removes the entry stored under key, if any.
func (s *CacheStore) Delete(ctx context.Context, key string) {
	if err := s.rdb.Del(ctx, s.prefix+key).Err(); err != nil {
		s.log.WarnContext(ctx, "redisstore: cache delete failed", "store", s.where, "err", err)
	}
}

// DeletePrefix removes every entry whose key starts with prefix (SCAN
// MATCH and UNLINK, a batch at a time).
func (s *CacheStore) DeletePrefix(ctx context.Context, prefix string) {
	if err := s.deletePrefix(ctx, s.prefix+prefix); err != nil {
		s.log.WarnContext(ctx, "redisstore: cache invalidation failed", "store", s.where, "err", err)
	}
}

func (s *CacheStore) deletePrefix(ctx context.Context, prefix string) error {
	match := globEscape(prefix) + "*"
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return scanDelete(ctx, c, match)
		})
	}
	return scanDelete(ctx, s.rdb, match)
}

// scanDelete unlinks the keys matching match, one SCAN batch at a time.
func scanDelete(ctx context.Context, c redis.Cmdable, match string) error {
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, match, scanBatch).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			// One key per command (in a cluster keys live in different
			// slots), the batch in one pipeline.
			_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Unlink(ctx, k)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
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
