package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "mcpadapter:"

// Defaults of Options.
const (
	// DefaultTimeout bounds one operation of a checkpoint or token store.
	DefaultTimeout = 5 * time.Second
	// DefaultCacheTimeout bounds one CacheStore operation: a cache that
	// cannot answer sooner misses.
	DefaultCacheTimeout = time.Second
	// DefaultCheckpointTTL is how long a checkpoint lives after its last
	// write.
	DefaultCheckpointTTL = 7 * 24 * time.Hour
)

// Options configures a store. A nil *Options means the defaults.
type Options struct {
	// Prefix starts every key; empty means DefaultPrefix. It must not
	// hold "{}" (an empty Redis Cluster hash tag).
	Prefix string
	// Logger receives the errors of CacheStore, whose methods return none
	// (a cache that cannot reach Redis misses); nil means slog.Default().
	Logger *slog.Logger
	// Timeout bounds each operation of a CheckpointStore or TokenStore
	// (one command or script, go-redis's own retries included); zero
	// means DefaultTimeout. The error names the store and its address.
	Timeout time.Duration
	// CacheTimeout bounds each CacheStore operation; zero means
	// DefaultCacheTimeout. A read that takes longer is a miss.
	CacheTimeout time.Duration
	// CheckpointTTL is how long a checkpoint lives after its last write
	// (Redis expires it); zero means DefaultCheckpointTTL, a negative
	// value keeps checkpoints until deleted.
	CheckpointTTL time.Duration
}

func (o *Options) prefix() string {
	if o == nil || o.Prefix == "" {
		return DefaultPrefix
	}
	return o.Prefix
}

func (o *Options) logger() *slog.Logger {
	if o == nil || o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

func (o *Options) timeout() time.Duration {
	if o == nil || o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

func (o *Options) cacheTimeout() time.Duration {
	if o == nil || o.CacheTimeout <= 0 {
		return DefaultCacheTimeout
	}
	return o.CacheTimeout
}

func (o *Options) checkpointTTL() time.Duration {
	switch {
	case o == nil || o.CheckpointTTL == 0:
		return DefaultCheckpointTTL
	case o.CheckpointTTL < 0:
		return 0
	}
	return o.CheckpointTTL
}

// where names the Redis server of rdb for error messages.
func where(rdb redis.UniversalClient) string {
	switch c := rdb.(type) {
	case *redis.Client:
		return "redis " + c.Options().Addr
	case *redis.ClusterClient:
		return fmt.Sprintf("redis cluster %v", c.Options().Addrs)
	case *redis.Ring:
		return fmt.Sprintf("redis ring %v", slices.Sorted(maps.Values(c.Options().Addrs)))
	default:
		return fmt.Sprintf("redis (%T)", rdb)
	}
}

// runner runs the commands of one store, each bounded by its own timeout.
type runner struct {
	rdb   redis.UniversalClient
	where string
	// ctxDeadlines says that go-redis applies a context's deadline to the
	// connection (Options.ContextTimeoutEnabled).
	ctxDeadlines bool
}

func newRunner(rdb redis.UniversalClient) runner {
	r := runner{rdb: rdb, where: where(rdb)}
	switch c := rdb.(type) {
	case *redis.Client:
		r.ctxDeadlines = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		r.ctxDeadlines = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		r.ctxDeadlines = c.Options().ContextTimeoutEnabled
	}
	return r
}

// call runs op with a context that ends after d and returns its result.
// go-redis bounds a command by the context's deadline only with
// ContextTimeoutEnabled; without it, op runs in a goroutine of its own and
// call returns at the deadline, the command ending within the client's
// ReadTimeout (3 s by default), its result dropped.
func call[T any](r runner, ctx context.Context, d time.Duration, op func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if r.ctxDeadlines {
		return op(ctx)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := op(ctx)
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		return res.v, res.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("no answer within %v: %w", d, context.Cause(ctx))
	}
}

// do is call for an op with no result.
func (r runner) do(ctx context.Context, d time.Duration, op func(context.Context) error) error {
	_, err := call(r, ctx, d, func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) })
	return err
}
