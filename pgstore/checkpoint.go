package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// checkpointSweepEvery is how often Set sweeps expired checkpoints.
const checkpointSweepEvery = time.Hour

// CheckpointStore keeps eino checkpoints in PostgreSQL. Its Get and Set
// are those of eino's adk.CheckPointStore (and compose.CheckPointStore),
// so it can be given to eino.AgentConfig.Store. A checkpoint lives
// Options.CheckpointTTL (DefaultCheckpointTTL, 7 days) after its last
// write: an older one is not returned, and Sweep deletes it (Set sweeps
// at most once an hour). Delete removes a finished run's at once.
type CheckpointStore struct {
	pool                 *pgxpool.Pool
	get, set, del, sweep string
	ttl                  time.Duration // 0: no expiry
	timeout              time.Duration
	where                string
	log                  *slog.Logger
	nextSweep            atomic.Int64 // Unix ns; the Set that passes it sweeps
}

// NewCheckpointStore checks that the checkpoints table is there
// (creating it only if it is missing) and returns a CheckpointStore on
// it.
func NewCheckpointStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*CheckpointStore, error) {
	if err := ensure(ctx, pool, opts, opts.timeout(), "checkpoints"); err != nil {
		return nil, err
	}
	t := opts.table("checkpoints")
	s := &CheckpointStore{
		pool:    pool,
		get:     `SELECT data FROM ` + t + ` WHERE id = $1 AND ($2::bigint = 0 OR updated_at > now() - $2 * interval '1 millisecond')`,
		set:     `INSERT INTO ` + t + ` (id, data) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, updated_at = now()`,
		del:     `DELETE FROM ` + t + ` WHERE id = $1`,
		sweep:   `DELETE FROM ` + t + ` WHERE id IN (SELECT id FROM ` + t + ` WHERE updated_at <= now() - $1 * interval '1 millisecond' LIMIT ` + fmt.Sprint(sweepBatch) + ` FOR UPDATE SKIP LOCKED) AND updated_at <= now() - $1 * interval '1 millisecond'`,
		ttl:     opts.checkpointTTL(),
		timeout: opts.timeout(),
		where:   where(pool),
		log:     opts.logger(),
	}
	s.nextSweep.Store(time.Now().Add(checkpointSweepEvery).UnixNano())
	return s, nil
}

// Get returns the checkpoint id, and whether there is one.
func (s *CheckpointStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var b []byte
	err := s.pool.QueryRow(ctx, s.get, fitKey(id), s.ttl.Milliseconds()).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: reading checkpoint %q from %s: %w", id, s.where, err)
	}
	return b, true, nil
}

// Set writes the checkpoint id. At most once an hour it also sweeps
// expired checkpoints (errors logged).
func (s *CheckpointStore) Set(ctx context.Context, id string, data []byte) error {
	sctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := exec(sctx, s.pool, s.set, fitKey(id), data); err != nil {
		return fmt.Errorf("pgstore: writing checkpoint %q to %s: %w", id, s.where, err)
	}
	now := time.Now()
	if next := s.nextSweep.Load(); s.ttl > 0 && now.UnixNano() >= next && s.nextSweep.CompareAndSwap(next, now.Add(checkpointSweepEvery).UnixNano()) {
		if _, err := s.Sweep(ctx); err != nil {
			s.log.WarnContext(ctx, "pgstore: checkpoint sweep failed", "store", s.where, "err", err)
		}
	}
	return nil
}

// Delete removes the checkpoint id. eino never deletes a checkpoint:
// call Delete when a run has finished (its last event was not an
// interrupt) to free its row before CheckpointTTL.
func (s *CheckpointStore) Delete(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := exec(ctx, s.pool, s.del, fitKey(id)); err != nil {
		return fmt.Errorf("pgstore: deleting checkpoint %q from %s: %w", id, s.where, err)
	}
	return nil
}

// Sweep deletes the checkpoints older than CheckpointTTL, at most 100
// batches of 1000 (each bounded by Options.Timeout), and returns how many
// it deleted. With no CheckpointTTL it deletes nothing.
func (s *CheckpointStore) Sweep(ctx context.Context) (int64, error) {
	if s.ttl <= 0 {
		return 0, nil
	}
	var total int64
	for range sweepMaxBatches {
		bctx, cancel := context.WithTimeout(ctx, s.timeout)
		n, err := exec(bctx, s.pool, s.sweep, s.ttl.Milliseconds())
		cancel()
		if err != nil {
			return total, fmt.Errorf("pgstore: sweeping checkpoints at %s: %w", s.where, err)
		}
		total += n
		if n < sweepBatch {
			break
		}
	}
	return total, nil
}
