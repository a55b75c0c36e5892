package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// LimitStore keeps the counters of rate limits, the leases of concurrency
// caps and the ids of requests that may be used once (DPoP proofs) in
// Redis, for replicas that share them: it is a gateway.LimitStore and a
// resourceserver.ReplayStore. Every operation is one Lua script, atomic
// on its key, and uses Redis's clock (TIME), so replicas whose clocks
// differ count alike.
type LimitStore struct {
	r       runner
	prefix  string
	timeout time.Duration
}

// NewLimitStore returns a LimitStore on rdb. Options.Timeout bounds each
// operation.
func NewLimitStore(rdb redis.UniversalClient, opts *Options) *LimitStore {
	return &LimitStore{r: newRunner(rdb), prefix: opts.prefix(), timeout: opts.timeout()}
}

// key is the Redis key of kind and name. Each script uses one key, so any
// name works on a Redis Cluster.
func (s *LimitStore) key(kind, name string) string {
	return s.prefix + "limit:" + kind + ":" + name
}

// take is GCRA (the generic cell rate algorithm): the key holds the
// theoretical arrival time in microseconds; a request is allowed when it
// is at most burst intervals ahead of now. It returns 0, or the
// microseconds to wait.
var take = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new = tat + interval
local wait = new - burst * interval - now
if wait > 0 then return wait end
redis.call('SET', KEYS[1], string.format('%.0f', new), 'PX', math.ceil((new - now) / 1000) + 1)
return 0
`)

// Take takes one request from the rate limit key, which allows one
// request per interval and bursts of up to burst. When the limit is
// reached it returns ok false and the time after which a request is
// allowed again.
func (s *LimitStore) Take(ctx context.Context, key string, interval time.Duration, burst int) (ok bool, retryAfter time.Duration, err error) {
	us := max(interval.Microseconds(), 1)
	wait, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return take.Run(ctx, s.r.rdb, []string{s.key("rate", key)}, us, max(burst, 1)).Int64()
	})
	if err != nil {
		return false, 0, fmt.Errorf("redisstore: rate limit at %s: %w", s.r.where, err)
	}
	return wait == 0, time.Duration(wait) * time.Microsecond, nil
}

// acquireLease sweeps the expired leases of the sorted set KEYS[1]
// (member: lease, score: expiry in ms), then adds or renews ARGV[1] when
// it is held or fewer than ARGV[2] are. It returns 0, or the milliseconds
// until the first lease expires.
var acquireLease = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
	redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
	local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
	redis.call('PEXPIREAT', KEYS[1], last[2])
	return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(tonumber(first[2]) - now, 1)
`)

// renewLease extends ARGV[1] by ARGV[2] ms if it is still held.
var renewLease = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not exp or tonumber(exp) <= now then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
`)

// Acquire takes one of the max slots of the concurrency cap key as lease
// (an id unique to the holder) for ttl. When all are held it returns ok
// false and the time until the first held lease expires (it may end
// sooner). A lease not renewed within ttl lapses: a holder that died
// gives its slot back.
func (s *LimitStore) Acquire(ctx context.Context, key, lease string, maxHeld int, ttl time.Duration) (ok bool, retryAfter time.Duration, err error) {
	wait, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return acquireLease.Run(ctx, s.r.rdb, []string{s.key("lease", key)}, lease, maxHeld, max(ttl.Milliseconds(), 1)).Int64()
	})
	if err != nil {
		return false, 0, fmt.Errorf("redisstore: concurrency cap at %s: %w", s.r.where, err)
	}
	return wait == 0, time.Duration(wait) * time.Millisecond, nil
}

// Renew extends a held lease by ttl from now; it returns false when the
// lease has lapsed or was released.
func (s *LimitStore) Renew(ctx context.Context, key, lease string, ttl time.Duration) (bool, error) {
	n, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return renewLease.Run(ctx, s.r.rdb, []string{s.key("lease", key)}, lease, max(ttl.Milliseconds(), 1)).Int64()
	})
	if err != nil {
		return false, fmt.Errorf("redisstore: renewing a lease at %s: %w", s.r.where, err)
	}
	return n == 1, nil
}

// Release gives a lease back.
func (s *LimitStore) Release(ctx context.Context, key, lease string) error {
	err := s.r.do(ctx, s.timeout, func(ctx context.Context) error {
		return s.r.rdb.ZRem(ctx, s.key("lease", key), lease).Err()
	})
	if err != nil {
		return fmt.Errorf("redisstore: releasing a lease at %s: %w", s.r.where, err)
	}
	return nil
}

// once records ARGV[1] in the sorted set KEYS[1] until ARGV[2] ms from
// now unless it is there (1) or ARGV[3] live ids are (2).
var once = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 2 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 0
`)

// Once records id in bucket for ttl: fresh is true when it was not there.
// A bucket holds at most maxLive live ids; when it is full, full is true
// and id is not recorded. Replicas sharing the store accept an id once.
func (s *LimitStore) Once(ctx context.Context, bucket, id string, ttl time.Duration, maxLive int) (fresh, full bool, err error) {
	n, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return once.Run(ctx, s.r.rdb, []string{s.key("once", bucket)}, id, max(ttl.Milliseconds(), 1), max(maxLive, 1)).Int64()
	})
	if err != nil {
		return false, false, fmt.Errorf("redisstore: replay check at %s: %w", s.r.where, err)
	}
	return n == 0, n == 2, nil
}
