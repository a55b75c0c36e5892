package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// SessionStore keeps the sessions of a gateway's handshake-era clients in
// Redis, so that every replica serves every session: it is a
// gateway.SessionStore. A session's record is one key with the session's
// lifetime as its expiry.
type SessionStore struct{ recs records }

// NewSessionStore returns a SessionStore on rdb. Options.Timeout bounds
// each operation.
func NewSessionStore(rdb redis.UniversalClient, opts *Options) *SessionStore {
	return &SessionStore{recs: newRecords(rdb, opts, "session", "a session")}
}

// LoadSession returns the record of session id, or nil and no error when
// there is none.
func (s *SessionStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	return s.recs.load(ctx, id)
}

// SaveSession stores rec as the record of session id, expiring ttl after
// now.
func (s *SessionStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	return s.recs.save(ctx, id, rec, ttl)
}

// ReplaceSession stores rec as the record of session id, expiring ttl
// after now, only if the session's record is old (one script): it
// reports whether it did.
func (s *SessionStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.replace(ctx, id, old, rec, ttl)
}

// DeleteSession removes the record of session id.
func (s *SessionStore) DeleteSession(ctx context.Context, id string) error {
	return s.recs.remove(ctx, id)
}
