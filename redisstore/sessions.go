package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SessionStore keeps the sessions of a gateway's handshake-era clients in
// Redis, so that every replica serves every session: it is a
// gateway.SessionStore. A session's record is one key with the session's
// lifetime as its expiry.
type SessionStore struct {
	r       runner
	prefix  string
	timeout time.Duration
}

// NewSessionStore returns a SessionStore on rdb. Options.Timeout bounds
// each operation.
func NewSessionStore(rdb redis.UniversalClient, opts *Options) *SessionStore {
	return &SessionStore{r: newRunner(rdb), prefix: opts.prefix(), timeout: opts.timeout()}
}

func (s *SessionStore) key(id string) string { return s.prefix + "session:" + id }

// LoadSession returns the record of session id, or nil and no error when
// there is none.
func (s *SessionStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	b, err := call(s.r, ctx, s.timeout, func(ctx context.Context) ([]byte, error) {
		return s.r.rdb.Get(ctx, s.key(id)).Bytes()
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: loading a session at %s: %w", s.r.where, err)
	}
	return b, nil
}

// SaveSession stores rec as the record of session id, expiring ttl after
// now.
func (s *SessionStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	_, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (string, error) {
		return s.r.rdb.Set(ctx, s.key(id), rec, max(ttl, time.Millisecond)).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: saving a session at %s: %w", s.r.where, err)
	}
	return nil
}

// replaceSession sets KEYS[1] to ARGV[2], expiring in ARGV[3] ms, if it
// is ARGV[1].
var replaceSession = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// ReplaceSession stores rec as the record of session id, expiring ttl
// after now, only if the session's record is old (one script): it
// reports whether it did.
func (s *SessionStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	n, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return replaceSession.Run(ctx, s.r.rdb, []string{s.key(id)}, old, rec, max(ttl.Milliseconds(), 1)).Int64()
	})
	if err != nil {
		return false, fmt.Errorf("redisstore: replacing a session at %s: %w", s.r.where, err)
	}
	return n == 1, nil
}

// DeleteSession removes the record of session id.
func (s *SessionStore) DeleteSession(ctx context.Context, id string) error {
	_, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return s.r.rdb.Del(ctx, s.key(id)).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: deleting a session at %s: %w", s.r.where, err)
	}
	return nil
}
