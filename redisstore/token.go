package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/sealed"
	"github.com/redis/go-redis/v9"
)

// DefaultLockTTL is the lifetime of a refresh lock when
// TokenOptions.LockTTL is zero.
const DefaultLockTTL = 30 * time.Second

// TokenOptions configures a TokenStore.
type TokenOptions struct {
	Options
	// Key encrypts tokens at rest (AES-GCM; 16, 24 or 32 bytes). Give
	// every replica the same key; keep it out of Redis.
	Key []byte
	// Plaintext stores tokens unencrypted when Key is empty. Without Key
	// or Plaintext, NewTokenStore fails.
	Plaintext bool
	// LockTTL is the lifetime of the lock a refresh holds: the holder
	// extends it every third of LockTTL while it refreshes, so it lapses
	// only when the holder has stopped or cannot reach Redis (then
	// another replica may take over after LockTTL). Zero means
	// DefaultLockTTL.
	LockTTL time.Duration
}

// TokenStore keeps OAuth tokens in Redis, sealed with TokenOptions.Key.
// It is an mcpadapter.TokenUpdater: replicas refresh a token one at a
// time, each under a lock key (see Update), and a refreshed token is
// saved only if the stored one is still the one the refresh read (a
// compare-and-set in a Lua script), so a rotated refresh token is never
// lost.
type TokenStore struct {
	r       runner
	prefix  string
	box     *sealed.Box
	lockTTL time.Duration
	timeout time.Duration
}

var _ mcpadapter.TokenUpdater = (*TokenStore)(nil)

// NewTokenStore returns a TokenStore on rdb, or an error when opts gives
// neither a valid Key nor Plaintext, or a Prefix holding "{}".
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
		ttl = DefaultLockTTL
	}
	s := &TokenStore{r: newRunner(rdb), prefix: opts.Options.prefix(), box: box, lockTTL: ttl, timeout: opts.Options.timeout()}
	if err := s.checkKey("x"); err != nil {
		return nil, fmt.Errorf("redisstore: NewTokenStore: Prefix %q: %w", s.prefix, err)
	}
	return s, nil
}

// tokenKey and lockKey are the same up to the brace after key: the
// Redis Cluster hash tag (the text between the first "{" and the next
// "}") is the same for both, whatever Prefix and key hold, so a token and
// its lock are in one slot, as the scripts need.
func (s *TokenStore) tokenKey(key string) string { return s.prefix + "token:{" + key + "}" }
func (s *TokenStore) lockKey(key string) string  { return s.tokenKey(key) + ":lock" }

// checkKey refuses a key whose token and lock would be in different
// Redis Cluster slots: one whose hash tag is empty ("{}"), so that Redis
// hashes each whole name.
func (s *TokenStore) checkKey(key string) error {
	t, l := hashTag(s.tokenKey(key)), hashTag(s.lockKey(key))
	if t == "" || t != l {
		return fmt.Errorf("the key %q gives an empty Redis Cluster hash tag (\"{}\"): a token and its lock would be in different slots", key)
	}
	return nil
}

// hashTag is the part of a key Redis Cluster hashes when it has one: the
// text between the first "{" and the next "}", if not empty.
func hashTag(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return ""
	}
	return key[i+1 : i+1+j]
}

// Load returns the token kept for key, or nil.
func (s *TokenStore) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	b, err := s.get(ctx, key)
	if err != nil || b == nil {
		return nil, err
	}
	return s.decode(key, b)
}

// get returns the stored form of the token of key, or nil.
func (s *TokenStore) get(ctx context.Context, key string) ([]byte, error) {
	if err := s.checkKey(key); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	b, err := call(s.r, ctx, s.timeout, func(ctx context.Context) ([]byte, error) {
		return s.r.rdb.Get(ctx, s.tokenKey(key)).Bytes()
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: reading the token of %q from %s: %w", key, s.r.where, err)
	}
	return b, nil
}

func (s *TokenStore) decode(key string, b []byte) (*mcpadapter.StoredToken, error) {
	plain, err := s.box.Open(s.tokenKey(key), b)
	if err != nil {
		return nil, fmt.Errorf("redisstore: the token of %q in %s: %w", key, s.r.where, err)
	}
	var t mcpadapter.StoredToken
	if err := json.Unmarshal(plain, &t); err != nil {
		return nil, fmt.Errorf("redisstore: the token of %q in %s is not a stored token: %w", key, s.r.where, err)
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
	if err := s.checkKey(key); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	b, err := s.encode(key, t)
	if err != nil {
		return err
	}
	err = s.r.do(ctx, s.timeout, func(ctx context.Context) error {
		return s.r.rdb.Set(ctx, s.tokenKey(key), b, 0).Err()
	})
	if err != nil {
		return fmt.Errorf("redisstore: saving the token of %q to %s: %w", key, s.r.where, err)
	}
	return nil
}

// Delete removes the token kept for key.
func (s *TokenStore) Delete(ctx context.Context, key string) error {
	if err := s.checkKey(key); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	err := s.r.do(ctx, s.timeout, func(ctx context.Context) error {
		return s.r.rdb.Del(ctx, s.tokenKey(key)).Err()
	})
	if err != nil {
		return fmt.Errorf("redisstore: deleting the token of %q from %s: %w", key, s.r.where, err)
	}
	return nil
}

// acquire takes the lock KEYS[1] for owner ARGV[1] for ARGV[2] ms. It is
// idempotent: an owner that already holds the lock (its earlier attempt
// succeeded but the reply was lost) holds it again.
var acquire = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v == ARGV[1] then redis.call("PEXPIRE", KEYS[1], ARGV[2]) return 1 end
if v then return 0 end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return 1`)

// extend gives the lock KEYS[1] another ARGV[2] ms if owner ARGV[1]
// still holds it.
var extend = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then redis.call("PEXPIRE", KEYS[1], ARGV[2]) return 1 end
return 0`)

// save sets the token KEYS[1] to ARGV[3] if its value is still the one
// whose SHA-1 is ARGV[2] ("" for none), and releases the lock KEYS[2] if
// owner ARGV[1] holds it. It returns 1 when KEYS[1] holds ARGV[3]
// afterwards (a save whose reply was lost, sent again, finds it there),
// and 0 when another value was saved meanwhile.
var save = redis.NewScript(`
local cur = redis.call("GET", KEYS[1])
local res = 1
if cur ~= ARGV[3] then
  if (cur and redis.sha1hex(cur) or "") == ARGV[2] then redis.call("SET", KEYS[1], ARGV[3]) else res = 0 end
end
if redis.call("GET", KEYS[2]) == ARGV[1] then redis.call("DEL", KEYS[2]) end
return res`)

// unlock releases the lock KEYS[1] if owner ARGV[1] still holds it.
var unlock = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`)

// Attempts of the writes that must not be lost: the save of a refreshed
// token and the release of a lock.
const (
	saveAttempts    = 4
	releaseAttempts = 3
)

// Update takes the lock of key among every process sharing Redis (a lock
// key set with SET NX semantics and a relative expiry of LockTTL), reads
// the token, and calls fn while extending the lock every third of
// LockTTL; fn's context ends a third of LockTTL before the lock could
// lapse (if Redis stops answering the extensions), so a refresh never
// overlaps another replica's. The token fn returns (nil: nothing to
// save) is saved if the stored one is still the one read (else an error
// wrapping mcpadapter.ErrTokenChanged), with a bounded context of its own
// and retries, whatever ctx has become; then the lock is released.
func (s *TokenStore) Update(ctx context.Context, key string, fn func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error)) error {
	if err := s.checkKey(key); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	owner := rand.Text()
	since, err := s.lock(ctx, key, owner)
	if err != nil {
		s.release(ctx, key, owner) // an attempt whose reply was lost may hold it
		return err
	}
	raw, err := s.get(ctx, key)
	var cur *mcpadapter.StoredToken
	if err == nil && raw != nil {
		cur, err = s.decode(key, raw)
	}
	if err != nil {
		s.release(ctx, key, owner)
		return err
	}
	fctx, stop := s.hold(ctx, key, owner, since)
	next, err := fn(fctx, cur)
	if err != nil || next == nil {
		stop()
	} else {
		defer stop() // the lock is kept through the save
	}
	if err != nil {
		s.release(ctx, key, owner)
		return fmt.Errorf("redisstore: updating the token of %q: %w", key, err)
	}
	if next == nil {
		s.release(ctx, key, owner)
		return nil
	}
	b, err := s.encode(key, next)
	if err != nil {
		s.release(ctx, key, owner)
		return err
	}
	sum := ""
	if raw != nil {
		h := sha1.Sum(raw)
		sum = hex.EncodeToString(h[:])
	}
	// Not ctx: a token the authorization server issued is saved even when
	// the caller has stopped waiting.
	wctx := context.WithoutCancel(ctx)
	saved, err := retry(s, wctx, saveAttempts, func(ctx context.Context) (int, error) {
		return save.Run(ctx, s.r.rdb, []string{s.tokenKey(key), s.lockKey(key)}, owner, sum, b).Int()
	})
	if err != nil {
		s.release(wctx, key, owner)
		return fmt.Errorf("redisstore: saving the token of %q to %s: %w", key, s.r.where, err)
	}
	if saved != 1 {
		return fmt.Errorf("redisstore: the token of %q in %s: %w", key, s.r.where, mcpadapter.ErrTokenChanged)
	}
	return nil
}

// lock takes the lock of key for owner, polling while another process
// holds it, until ctx ends. It returns when the successful attempt was
// sent: the lock lasts at least LockTTL from then.
func (s *TokenStore) lock(ctx context.Context, key, owner string) (time.Time, error) {
	ttl := s.lockTTL.Milliseconds()
	wait := 5 * time.Millisecond
	var failures int
	for {
		sent := time.Now()
		ok, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int, error) {
			return acquire.Run(ctx, s.r.rdb, []string{s.lockKey(key)}, owner, ttl).Int()
		})
		switch {
		case err == nil && ok == 1:
			return sent, nil
		case err != nil && ctx.Err() == nil:
			// Sent again with the same owner: if the lost attempt took
			// the lock, this one finds it ours.
			if failures++; failures >= 3 {
				return time.Time{}, fmt.Errorf("redisstore: locking the token of %q in %s: %w", key, s.r.where, err)
			}
		case err == nil:
			failures = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, fmt.Errorf("redisstore: waiting for another process's refresh of the token of %q in %s: %w", key, s.r.where, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// errLockLapsed ends fn's context when the lock could not be kept.
var errLockLapsed = errors.New("redisstore: the token lock could not be extended; the refresh was stopped before another process could take the lock")

// hold extends the lock of key every third of LockTTL while fn runs
// (since is when the lock was last known to last LockTTL from). The
// context it returns ends a third of LockTTL before the lock could lapse:
// when an extension fails and none succeeds in time, or when another
// owner has the lock. stop ends the extensions and waits for them.
func (s *TokenStore) hold(ctx context.Context, key, owner string, since time.Time) (context.Context, func()) {
	fctx, cancel := context.WithCancelCause(ctx)
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		margin := s.lockTTL / 3
		valid := since.Add(s.lockTTL) // the lock lasts at least until then
		next := since.Add(s.lockTTL / 3)
		for {
			t := time.NewTimer(min(time.Until(next), time.Until(valid.Add(-margin))))
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
			if !time.Now().Before(valid.Add(-margin)) {
				cancel(errLockLapsed)
				return
			}
			sent := time.Now()
			ok, err := call(s.r, fctx, min(s.timeout, time.Until(valid.Add(-margin))), func(ctx context.Context) (int, error) {
				return extend.Run(ctx, s.r.rdb, []string{s.lockKey(key)}, owner, s.lockTTL.Milliseconds()).Int()
			})
			switch {
			case err == nil && ok == 1:
				valid, next = sent.Add(s.lockTTL), sent.Add(s.lockTTL/3)
			case err == nil:
				cancel(errLockLapsed) // another owner has it
				return
			default:
				next = time.Now().Add(s.lockTTL / 10) // try again soon
			}
		}
	}()
	return fctx, func() {
		close(done)
		<-ended
		cancel(nil)
	}
}

// release gives up the lock of key if owner holds it, with a bounded
// context of its own (not ctx's end) and a few attempts. A lock it cannot
// release lapses after LockTTL.
func (s *TokenStore) release(ctx context.Context, key, owner string) {
	_, _ = retry(s, context.WithoutCancel(ctx), releaseAttempts, func(ctx context.Context) (int, error) {
		return unlock.Run(ctx, s.r.rdb, []string{s.lockKey(key)}, owner).Int()
	})
}

// retry runs op up to attempts times, each bounded by Options.Timeout,
// backing off between them, and returns its first success or its last
// error.
func retry[T any](s *TokenStore, ctx context.Context, attempts int, op func(context.Context) (T, error)) (T, error) {
	var v T
	var err error
	wait := 50 * time.Millisecond
	for i := range attempts {
		if i > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return v, errors.Join(err, ctx.Err())
			case <-t.C:
			}
			wait *= 4
		}
		if v, err = call(s.r, ctx, s.timeout, op); err == nil {
			return v, nil
		}
	}
	return v, err
}
