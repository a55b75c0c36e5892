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
// it can be given to eino.AgentConfig.Store.
type CheckpointStore struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
	where  string
}

// NewCheckpointStore returns a CheckpointStore on rdb. It sends nothing
// until used.
func NewCheckpointStore(rdb redis.UniversalClient, opts *Options) *CheckpointStore {
	s := &CheckpointStore{rdb: rdb, prefix: opts.prefix() + "checkpoint:", where: where(rdb)}
	if opts != nil {
		s.ttl = opts.CheckpointTTL
	}
	return s
}

// Get returns the checkpoint id, and whether there is one.
func (s *CheckpointStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	b, err := s.rdb.Get(ctx, s.prefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: reading checkpoint %q from %s: %w", id, s.where, err)
	}
	return b, true, nil
}

// Set writes the checkpoint id.
func (s *CheckpointStore) Set(ctx context.Context, id string, data []byte) error {
	if err := s.rdb.Set(ctx, s.prefix+id, data, s.ttl).Err(); err != nil {
		return fmt.Errorf("redisstore: writing checkpoint %q to %s: %w", id, s.where, err)
	}
	return nil
}

// Delete removes the checkpoint id (eino never deletes checkpoints).
func (s *CheckpointStore) Delete(ctx context.Context, id string) error {
	if err := s.rdb.Del(ctx, s.prefix+id).Err(); err != nil {
		return fmt.Errorf("redisstore: deleting checkpoint %q from %s: %w", id, s.where, err)
	}
	return nil
}
