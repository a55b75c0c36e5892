package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SessionStore keeps the sessions of a gateway's handshake-era clients in
// PostgreSQL, so that every replica serves every session: it is a
// gateway.SessionStore. A session's record is one row with the time it
// expires, by the database's clock; rows that ran out are deleted now and
// then by the store's own operations.
type SessionStore struct{ recs *records }

// NewSessionStore checks the store's table on pool (creating it when it
// is missing, as Migrate does) and returns a SessionStore on it.
// Options.Timeout bounds each operation.
func NewSessionStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*SessionStore, error) {
	recs, err := newRecords(ctx, pool, opts, "sessions", "a session")
	if err != nil {
		return nil, err
	}
	return &SessionStore{recs: recs}, nil
}

// LoadSession returns the record of session id, or nil and no error when
// there is none (or it expired).
func (s *SessionStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	return s.recs.load(ctx, id)
}

// SaveSession stores rec as the record of session id, expiring ttl after
// now.
func (s *SessionStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	return s.recs.save(ctx, id, rec, ttl)
}

// ReplaceSession stores rec as the record of session id, expiring ttl
// after now, only if the session's record is old and has not expired
// (one UPDATE): it reports whether it did.
func (s *SessionStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.replace(ctx, id, old, rec, ttl)
}

// DeleteSession removes the record of session id.
func (s *SessionStore) DeleteSession(ctx context.Context, id string) error {
	return s.recs.remove(ctx, id)
}
