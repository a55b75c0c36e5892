package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// CheckpointStore keeps eino checkpoints in Redis. Its Get and Set are
// those of eino's adk.CheckPointStore (and compose.CheckPointStore), so
// it can be given to eino.AgentConfig.Store. A checkpoint lives
// Options.CheckpointTTL (DefaultCheckpointTTL, 7 days) after its last
// write; Delete removes a finished run's at once.
type CheckpointStore struct {
	r       runner
	prefix  string
	ttl     time.Duration // 0: no expiry
	timeout time.Duration
}

// NewCheckpointStore returns a CheckpointStore on rdb. It sends nothing
// until used.
func NewCheckpointStore(rdb redis.UniversalClient, opts *Options) *CheckpointStore {
	return &CheckpointStore{r: newRunner(rdb), prefix: opts.prefix() + "checkpoint:", ttl: opts.checkpointTTL(), timeout: opts.timeout()}
}

// Get returns the checkpoint id, and whether there is one.
func (s *CheckpointStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	b, err := call(s.r, ctx, s.timeout, func(ctx context.Context) ([]byte, error) {
		return s.r.rdb.Get(ctx, s.prefix+id).Bytes()
	})
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: reading checkpoint %q from %s: %w", id, s.r.where, err)
	}
	return b, true, nil
}

// Set writes the checkpoint id; it expires CheckpointTTL later (a
// relative expiry: the server's clock does not matter).
func (s *CheckpointStore) Set(ctx context.Context, id string, data []byte) error {
	err := s.r.do(ctx, s.timeout, func(ctx context.Context) error {
		return s.r.rdb.Set(ctx, s.prefix+id, data, s.ttl).Err()
	})
	if err != nil {
		return fmt.Errorf("redisstore: writing checkpoint %q to %s: %w", id, s.r.where, err)
	}
	return nil
}

// Delete removes the checkpoint id. eino never deletes a checkpoint:
// call Delete when a run has finished (its last event was not an
// interrupt) to free its space before CheckpointTTL.
func (s *CheckpointStore) Delete(ctx context.Context, id string) error {
	err := s.r.do(ctx, s.timeout, func(ctx context.Context) error {
		return s.r.rdb.Del(ctx, s.prefix+id).Err()
	})
	if err != nil {
		return fmt.Errorf("redisstore: deleting checkpoint %q from %s: %w", id, s.r.where, err)
	}
	return nil
}
