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

// TaskStore keeps the records of a gateway's tasks in PostgreSQL, so that
// every replica answers every request about a task: it is a
// gateway.TaskStore. A record is one row with the time it expires, by the
// database's clock; rows that ran out are deleted now and then by the
// store's own operations.
type TaskStore struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	where   string

	load, save, add, replace, del, sweep string
	lastSweep                            atomic.Int64
}

// NewTaskStore checks the store's table on pool (creating it when it is
// missing, as Migrate does) and returns a TaskStore on it.
// Options.Timeout bounds each operation.
func NewTaskStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*TaskStore, error) {
	if err := ensure(ctx, pool, opts, opts.timeout(), "tasks"); err != nil {
		return nil, err
	}
	t := opts.table("tasks")
	return &TaskStore{pool: pool, timeout: opts.timeout(), where: where(pool),
		load: `SELECT data FROM ` + t + ` WHERE id = $1 AND expires_at > ` + nowUS,
		save: `INSERT INTO ` + t + ` (id, data, expires_at) VALUES ($1, $2, ` + nowUS + ` + $3::bigint)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
		add: `INSERT INTO ` + t + ` AS o (id, data, expires_at) VALUES ($1, $2, ` + nowUS + ` + $3::bigint)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at WHERE o.expires_at <= ` + nowUS,
		replace: `UPDATE ` + t + ` SET data = $2, expires_at = ` + nowUS + ` + $3::bigint WHERE id = $1 AND data = $4 AND expires_at > ` + nowUS,
		del:     `DELETE FROM ` + t + ` WHERE id = $1`,
		sweep:   `DELETE FROM ` + t + ` WHERE expires_at <= ` + nowUS,
	}, nil
}

// LoadTask returns the record at key, or nil and no error when there is
// none (or it expired).
func (s *TaskStore) LoadTask(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var b []byte
	err := s.pool.QueryRow(ctx, s.load, key).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: loading a task record at %s: %w", s.where, err)
	}
	return b, nil
}

// SaveTask stores rec at key, expiring ttl after now.
func (s *TaskStore) SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.save, key, rec, max(ttl.Microseconds(), 1)); err != nil {
		return fmt.Errorf("pgstore: saving a task record at %s: %w", s.where, err)
	}
	s.sweepSometimes(ctx)
	return nil
}

// AddTask stores rec at key, expiring ttl after now, only if there is no
// record there or it expired (one INSERT): it reports whether it did.
func (s *TaskStore) AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.add, key, rec, max(ttl.Microseconds(), 1))
	if err != nil {
		return false, fmt.Errorf("pgstore: adding a task record at %s: %w", s.where, err)
	}
	s.sweepSometimes(ctx)
	return tag.RowsAffected() == 1, nil
}

// ReplaceTask stores rec at key, expiring ttl after now, only if the
// record there is old and has not expired (one UPDATE): it reports
// whether it did.
func (s *TaskStore) ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.replace, key, rec, max(ttl.Microseconds(), 1), old)
	if err != nil {
		return false, fmt.Errorf("pgstore: replacing a task record at %s: %w", s.where, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteTask removes the record at key.
func (s *TaskStore) DeleteTask(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.del, key); err != nil {
		return fmt.Errorf("pgstore: deleting a task record at %s: %w", s.where, err)
	}
	return nil
}

// sweepSometimes deletes the rows that ran out, at most once per
// limitSweepEvery; its errors are left to the next one.
func (s *TaskStore) sweepSometimes(ctx context.Context) {
	now := time.Now().UnixNano()
	last := s.lastSweep.Load()
	if now-last < int64(limitSweepEvery) || !s.lastSweep.CompareAndSwap(last, now) {
		return
	}
	_, _ = s.pool.Exec(ctx, s.sweep)
}
