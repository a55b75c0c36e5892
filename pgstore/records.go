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

// records are the rows of a table of records (id, data, expires_at), each
// with the time it expires by the database's clock: the gateway's
// sessions and tasks. Rows that ran out are deleted now and then by the
// store's own writes.
type records struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	where   string
	what    string // what a record is, for errors: "a session"

	loadSQL, saveSQL, addSQL, replaceSQL, deleteSQL, deleteIfSQL, sweepSQL string
	lastSweep                                                              atomic.Int64
}

// newRecords checks the table (creating it when it is missing, as Migrate
// does) and returns its records.
func newRecords(ctx context.Context, pool *pgxpool.Pool, opts *Options, table, what string) (*records, error) {
	if err := ensure(ctx, pool, opts, opts.timeout(), table); err != nil {
		return nil, err
	}
	t := opts.table(table)
	return &records{pool: pool, timeout: opts.timeout(), where: where(pool), what: what,
		loadSQL: `SELECT data FROM ` + t + ` WHERE id = $1 AND expires_at > ` + nowUS,
		saveSQL: `INSERT INTO ` + t + ` (id, data, expires_at) VALUES ($1, $2, ` + nowUS + ` + $3::bigint)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
		addSQL: `INSERT INTO ` + t + ` AS o (id, data, expires_at) VALUES ($1, $2, ` + nowUS + ` + $3::bigint)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at WHERE o.expires_at <= ` + nowUS,
		replaceSQL:  `UPDATE ` + t + ` SET data = $2, expires_at = ` + nowUS + ` + $3::bigint WHERE id = $1 AND data = $4 AND expires_at > ` + nowUS,
		deleteSQL:   `DELETE FROM ` + t + ` WHERE id = $1`,
		deleteIfSQL: `DELETE FROM ` + t + ` WHERE id = $1 AND data = $2`,
		sweepSQL:    `DELETE FROM ` + t + ` WHERE expires_at <= ` + nowUS,
	}, nil
}

// load returns the record id, or nil and no error when there is none (or
// it expired).
func (s *records) load(ctx context.Context, id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var b []byte
	err := s.pool.QueryRow(ctx, s.loadSQL, id).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: loading %s at %s: %w", s.what, s.where, err)
	}
	return b, nil
}

// save stores rec as the record id, expiring ttl after now.
func (s *records) save(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.saveSQL, id, rec, max(ttl.Microseconds(), 1)); err != nil {
		return fmt.Errorf("pgstore: saving %s at %s: %w", s.what, s.where, err)
	}
	s.sweepSometimes(ctx)
	return nil
}

// add stores rec as the record id, expiring ttl after now, only if
// there is none or it expired (one INSERT): it reports whether it did.
func (s *records) add(ctx context.Context, id string, rec []byte, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.addSQL, id, rec, max(ttl.Microseconds(), 1))
	if err != nil {
		return false, fmt.Errorf("pgstore: adding %s at %s: %w", s.what, s.where, err)
	}
	s.sweepSometimes(ctx)
	return tag.RowsAffected() == 1, nil
}

// replace stores rec as the record id, expiring ttl after now, only if the
// record is old and has not expired (one UPDATE): it reports whether it
// did.
func (s *records) replace(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.replaceSQL, id, rec, max(ttl.Microseconds(), 1), old)
	if err != nil {
		return false, fmt.Errorf("pgstore: replacing %s at %s: %w", s.what, s.where, err)
	}
	return tag.RowsAffected() == 1, nil
}

// remove deletes the record id.
func (s *records) remove(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.deleteSQL, id); err != nil {
		return fmt.Errorf("pgstore: deleting %s at %s: %w", s.what, s.where, err)
	}
	return nil
}

// removeIf deletes the record id only if it is rec (one DELETE).
func (s *records) removeIf(ctx context.Context, id string, rec []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.deleteIfSQL, id, rec); err != nil {
		return fmt.Errorf("pgstore: deleting %s at %s: %w", s.what, s.where, err)
	}
	return nil
}

// sweepSometimes deletes the rows that ran out, at most once per
// limitSweepEvery; its errors are left to the next one.
func (s *records) sweepSometimes(ctx context.Context) {
	now := time.Now().UnixNano()
	last := s.lastSweep.Load()
	if now-last < int64(limitSweepEvery) || !s.lastSweep.CompareAndSwap(last, now) {
		return
	}
	_, _ = s.pool.Exec(ctx, s.sweepSQL)
}
