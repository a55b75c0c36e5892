package redisstore

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "mcpadapter:"

// Options configures a store. A nil *Options means the defaults.
type Options struct {
	// Prefix starts every key; empty means DefaultPrefix.
	Prefix string
	// Logger receives the errors of CacheStore, whose methods return none
	// (a cache that cannot reach Redis misses); nil means slog.Default().
	Logger *slog.Logger
	// CheckpointTTL, if positive, expires checkpoints this long after
	// their last write. Zero keeps them until deleted.
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

// where names the Redis server of rdb for error messages.
func where(rdb redis.UniversalClient) string {
	switch c := rdb.(type) {
	case *redis.Client:
		return "redis " + c.Options().Addr
	case *redis.ClusterClient:
		return fmt.Sprintf("redis cluster %v", c.Options().Addrs)
	case *redis.Ring:
		return "redis ring"
	default:
		return "redis"
	}
}
