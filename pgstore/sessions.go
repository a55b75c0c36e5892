package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SessionStore keeps the sessions of a gateway's handshake-era clients in
// PostgreSQL, so that every replica serves every session: it is a
// gateway.SessionStore. A session's record is one row with the time it
// expires, by the database's clock; rows that ran out are deleted now and
// then by the store's own operations.
type SessionStore struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	where   string

	load, save, replace, del, sweep string
	lastSweep                       atomic.Int64
}

// NewSessionStore checks the store's table on pool (creating it when it
// is missing, as Migrate does) and returns a SessionStore on it.
// Options.Timeout bounds each operation.
func NewSessionStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*SessionStore, error) {
	if err := ensure(ctx, pool, opts, opts.timeout(), "sessions"); err != nil {
		return nil, err
	}
	t := opts.table("sessions")
	return &SessionStore{pool: pool, timeout: opts.timeout(), where: where(pool),
		load: `SELECT data FROM ` + t + ` WHERE id = $1 AND expires_at > ` + nowUS,
		save: `INSERT INTO ` + t + ` (id, data, expires_at) VALUES ($1, $2, ` + nowUS + ` + $3::bigint)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
		replace: `UPDATE ` + t + ` SET data = $2, expires_at = ` + nowUS + ` + $3::bigint WHERE id = $1 AND data = $4 AND expires_at > ` + nowUS,
		del:     `DELETE FROM ` + t + ` WHERE id = $1`,
		sweep:   `DELETE FROM ` + t + ` WHERE expires_at <= ` + nowUS,
	}, nil
}

// LoadSession returns the record of session id, or nil and no error when
// there is none (or it expired).
func (s *SessionStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var b []byte
	err := s.pool.QueryRow(ctx, s.load, id).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: loading a session at %s: %w", s.where, err)
	}
	return b, nil
}

// SaveSession stores rec as the record of session id, expiring ttl after
// now.
func (s *SessionStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.save, id, rec, max(ttl.Microseconds(), 1)); err != nil {
		return fmt.Errorf("pgstore: saving a session at %s: %w", s.where, err)
	}
	s.sweepSometimes(ctx)
	return nil
}

// ReplaceSession stores rec as the record of session id, expiring ttl
// after now, only if the session's record is old and has not expired
// (one UPDATE): it reports whether it did.
func (s *SessionStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.replace, id, rec, max(ttl.Microseconds(), 1), old)
	if err != nil {
		return false, fmt.Errorf("pgstore: replacing a session at %s: %w", s.where, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteSession removes the record of session id.
func (s *SessionStore) DeleteSession(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.del, id); err != nil {
		return fmt.Errorf("pgstore: deleting a session at %s: %w", s.where, err)
	}
	return nil
}

// sweepSometimes deletes the rows that ran out, at most once per
// limitSweepEvery; its errors are left to the next one.
func (s *SessionStore) sweepSometimes(ctx context.Context) {
	now := time.Now().UnixNano()
	last := s.lastSweep.Load()
	if now-last < int64(limitSweepEvery) || !s.lastSweep.CompareAndSwap(last, now) {
		return
	}
	_, _ = s.pool.Exec(ctx, s.sweep)
}
