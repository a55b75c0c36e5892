package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/sealed"
	"github.com/redis/go-redis/v9"
)

// TokenOptions configures a TokenStore.
type TokenOptions struct {
	Options
	// Key encrypts tokens at rest (AES-GCM; 16, 24 or 32 bytes). Give
	// every replica the same key; keep it out of Redis.
	Key []byte
	// Plaintext stores tokens unencrypted when Key is empty. Without Key
	// or Plaintext, NewTokenStore fails.
	Plaintext bool
	// LockTTL bounds how long a crashed process's refresh lock blocks the
	// others; zero means 30 seconds.
	LockTTL time.Duration
}

// TokenStore keeps OAuth tokens in Redis, sealed with TokenOptions.Key.
// It is an mcpadapter.TokenUpdater: replicas refresh a token one at a
// time, each under a lock key (SET NX PX), and the token is saved only
// while the lock is still the saver's (a Lua compare-and-set), so a
// rotated refresh token is never lost.
type TokenStore struct {
	rdb     redis.UniversalClient
	prefix  string
	box     *sealed.Box
	lockTTL time.Duration
	where   string
}

var _ mcpadapter.TokenUpdater = (*TokenStore)(nil)

// NewTokenStore returns a TokenStore on rdb, or an error when opts gives
// neither a valid Key nor Plaintext.
func NewTokenStore(rdb redis.UniversalClient, opts *TokenOptions) (*TokenStore, error) {
	if opts == nil {
		opts = &TokenOptions{}
	}
	box, err := sealed.New(opts.Key, opts.Plaintext)
	if err != nil {
		return nil, fmt.Errorf("redisstore: NewTokenStore: %w", err)
	}
	ttl := opts.LockTTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	return &TokenStore{rdb: rdb, prefix: opts.Options.prefix(), box: box, lockTTL: ttl, where: where(rdb)}, nil
}

// tokenKey and lockKey put key in braces, a Redis Cluster hash tag: a
// token and its lock are in one slot, as the Lua script needs.
func (s *TokenStore) tokenKey(key string) string { return s.prefix + "token:{" + key + "}" }
func (s *TokenStore) lockKey(key string) string  { return s.prefix + "token-lock:{" + key + "}" }

// Load returns the token kept for key, or nil.
func (s *TokenStore) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	b, err := s.rdb.Get(ctx, s.tokenKey(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: reading the token of %q from %s: %w", key, s.where, err)
	}
	return s.decode(key, b)
}

func (s *TokenStore) decode(key string, b []byte) (*mcpadapter.StoredToken, error) {
	plain, err := s.box.Open(s.tokenKey(key), b)
	if err != nil {
		return nil, fmt.Errorf("redisstore: the token of %q in %s: %w", key, s.where, err)
	}
	var t mcpadapter.StoredToken
	if err := json.Unmarshal(plain, &t); err != nil {
		return nil, fmt.Errorf("redisstore: the token of %q in %s is not a stored token: %w", key, s.where, err)
	}
	return &t, nil
}

func (s *TokenStore) encode(key string, t *mcpadapter.StoredToken) ([]byte, error) {
	plain, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("redisstore: encoding the token of %q: %w", key, err)
	}
	return s.box.Seal(s.tokenKey(key), plain), nil
}

// Save keeps t for key, replacing what was there.
func (s *TokenStore) Save(ctx context.Context, key string, t *mcpadapter.StoredToken) error {
	b, err := s.encode(key, t)
	if err != nil {
		return err
	}
	if err := s.rdb.Set(ctx, s.tokenKey(key), b, 0).Err(); err != nil {
		return fmt.Errorf("redisstore: saving the token of %q to %s: %w", key, s.where, err)
	}
	return nil
}

// Delete removes the token kept for key.
func (s *TokenStore) Delete(ctx context.Context, key string) error {
	if err := s.rdb.Del(ctx, s.tokenKey(key)).Err(); err != nil {
		return fmt.Errorf("redisstore: deleting the token of %q from %s: %w", key, s.where, err)
	}
	return nil
}

// saveIfOwner sets KEYS[1] to ARGV[2] if the lock KEYS[2] holds ARGV[1],
// and releases the lock when ARGV[3] is "1".
var saveIfOwner = redis.NewScript(`
if redis.call("GET", KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[2] ~= "" then redis.call("SET", KEYS[1], ARGV[2]) end
if ARGV[3] == "1" then redis.call("DEL", KEYS[2]) end
return 1`)

// unlock releases the lock KEYS[1] if it still holds ARGV[1].
var unlock = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`)

// ErrLockLost is returned by Update when its lock expired (LockTTL) before
// it could save: another process may have refreshed in the meantime, so
// the token fn made is not saved.
var ErrLockLost = errors.New("redisstore: the token lock expired before the save")

// Update locks key among every process sharing the store, calls fn with
// the token stored under it (nil if none), and saves the token fn returns
// (nil: nothing to save) while the lock is still held.
func (s *TokenStore) Update(ctx context.Context, key string, fn func(*mcpadapter.StoredToken) (*mcpadapter.StoredToken, error)) error {
	owner := rand.Text()
	if err := s.lock(ctx, key, owner); err != nil {
		return err
	}
	release := func() {
		// Not ctx: release even when it has ended.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = unlock.Run(rctx, s.rdb, []string{s.lockKey(key)}, owner).Err()
	}
	cur, err := s.Load(ctx, key)
	if err != nil {
		release()
		return err
	}
	next, err := fn(cur)
	if err != nil {
		release()
		return fmt.Errorf("redisstore: updating the token of %q: %w", key, err)
	}
	if next == nil {
		release()
		return nil
	}
	b, err := s.encode(key, next)
	if err != nil {
		release()
		return err
	}
	ok, err := saveIfOwner.Run(ctx, s.rdb, []string{s.tokenKey(key), s.lockKey(key)}, owner, b, "1").Int()
	if err != nil {
		release()
		return fmt.Errorf("redisstore: saving the token of %q to %s: %w", key, s.where, err)
	}
	if ok != 1 {
		return fmt.Errorf("%w (key %q, %s, lock TTL %v)", ErrLockLost, key, s.where, s.lockTTL)
	}
	return nil
}

// lock takes the lock of key, polling until it is free or ctx ends.
func (s *TokenStore) lock(ctx context.Context, key, owner string) error {
	wait := 5 * time.Millisecond
	for {
		ok, err := s.rdb.SetNX(ctx, s.lockKey(key), owner, s.lockTTL).Result()
		if err != nil {
			return fmt.Errorf("redisstore: locking the token of %q in %s: %w", key, s.where, err)
		}
		if ok {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("redisstore: waiting for another process's refresh of the token of %q in %s: %w", key, s.where, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}
