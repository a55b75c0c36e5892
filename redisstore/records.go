package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// records are records under one kind of key, each with its lifetime as
// its key's expiry: the gateway's sessions and tasks.
type records struct {
	r       runner
	prefix  string // the keys' prefix, Options.Prefix and the kind
	what    string // what a record is, for errors: "a session"
	timeout time.Duration
}

func newRecords(rdb redis.UniversalClient, opts *Options, kind, what string) records {
	return records{r: newRunner(rdb), prefix: opts.prefix() + kind + ":", what: what, timeout: opts.timeout()}
}

// load returns the record at k, or nil and no error when there is none.
func (s *records) load(ctx context.Context, k string) ([]byte, error) {
	b, err := call(s.r, ctx, s.timeout, func(ctx context.Context) ([]byte, error) {
		return s.r.rdb.Get(ctx, s.prefix+k).Bytes()
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: loading %s at %s: %w", s.what, s.r.where, err)
	}
	return b, nil
}

// save stores rec at k, expiring ttl after now.
func (s *records) save(ctx context.Context, k string, rec []byte, ttl time.Duration) error {
	_, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (string, error) {
		return s.r.rdb.Set(ctx, s.prefix+k, rec, max(ttl, time.Millisecond)).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: saving %s at %s: %w", s.what, s.r.where, err)
	}
	return nil
}

// add stores rec at k, expiring ttl after now, only if there is no record
// there (SET NX): it reports whether it did.
func (s *records) add(ctx context.Context, k string, rec []byte, ttl time.Duration) (bool, error) {
	ok, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (bool, error) {
		return s.r.rdb.SetNX(ctx, s.prefix+k, rec, max(ttl, time.Millisecond)).Result()
	})
	if err != nil {
		return false, fmt.Errorf("redisstore: adding %s at %s: %w", s.what, s.r.where, err)
	}
	return ok, nil
}

// replaceRecord sets KEYS[1] to ARGV[2], expiring in ARGV[3] ms, if it is
// ARGV[1].
var replaceRecord = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// replace stores rec at k, expiring ttl after now, only if the record
// there is old (one script): it reports whether it did.
func (s *records) replace(ctx context.Context, k string, old, rec []byte, ttl time.Duration) (bool, error) {
	n, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return replaceRecord.Run(ctx, s.r.rdb, []string{s.prefix + k}, old, rec, max(ttl.Milliseconds(), 1)).Int64()
	})
	if err != nil {
		return false, fmt.Errorf("redisstore: replacing %s at %s: %w", s.what, s.r.where, err)
	}
	return n == 1, nil
}

// remove deletes the record at k.
func (s *records) remove(ctx context.Context, k string) error {
	_, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return s.r.rdb.Del(ctx, s.prefix+k).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: deleting %s at %s: %w", s.what, s.r.where, err)
	}
	return nil
}

// removeRecord deletes KEYS[1] if it is ARGV[1].
var removeRecord = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`)

// removeIf deletes the record at k only if it is rec (one script).
func (s *records) removeIf(ctx context.Context, k string, rec []byte) error {
	_, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return removeRecord.Run(ctx, s.r.rdb, []string{s.prefix + k}, rec).Int64()
	})
	if err != nil {
		return fmt.Errorf("redisstore: deleting %s at %s: %w", s.what, s.r.where, err)
	}
	return nil
}
