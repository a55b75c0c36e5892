package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CheckpointStore keeps eino checkpoints in PostgreSQL. Its Get and Set
// are those of eino's adk.CheckPointStore (and compose.CheckPointStore),
// so it can be given to eino.AgentConfig.Store.
type CheckpointStore struct {
	pool          *pgxpool.Pool
	get, set, del string
	where         string
}

// NewCheckpointStore creates the checkpoints table if it is missing and
// returns a CheckpointStore on it.
func NewCheckpointStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*CheckpointStore, error) {
	if err := migrate(ctx, pool, opts, "checkpoints"); err != nil {
		return nil, err
	}
	t := opts.table("checkpoints")
	return &CheckpointStore{
		pool:  pool,
		get:   `SELECT data FROM ` + t + ` WHERE id = $1`,
		set:   `INSERT INTO ` + t + ` (id, data) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, updated_at = now()`,
		del:   `DELETE FROM ` + t + ` WHERE id = $1`,
		where: where(pool),
	}, nil
}

// Get returns the checkpoint id, and whether there is one.
func (s *CheckpointStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, s.get, id).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: reading checkpoint %q from %s: %w", id, s.where, err)
	}
	return b, true, nil
}

// Set writes the checkpoint id.
func (s *CheckpointStore) Set(ctx context.Context, id string, data []byte) error {
	if _, err := s.pool.Exec(ctx, s.set, id, data); err != nil {
		return fmt.Errorf("pgstore: writing checkpoint %q to %s: %w", id, s.where, err)
	}
	return nil
}

// Delete removes the checkpoint id (eino never deletes checkpoints).
func (s *CheckpointStore) Delete(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, s.del, id); err != nil {
		return fmt.Errorf("pgstore: deleting checkpoint %q from %s: %w", id, s.where, err)
	}
	return nil
}
