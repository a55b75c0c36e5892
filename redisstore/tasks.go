package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// TaskStore keeps the records of a gateway's tasks in Redis, so that
// every replica answers every request about a task: it is a
// gateway.TaskStore. A record is one key with its lifetime as its expiry.
type TaskStore struct{ recs records }

// NewTaskStore returns a TaskStore on rdb. Options.Timeout bounds each
// operation.
func NewTaskStore(rdb redis.UniversalClient, opts *Options) *TaskStore {
	return &TaskStore{recs: newRecords(rdb, opts, "task", "a task record")}
}

// LoadTask returns the record at key, or nil and no error when there is
// none.
func (s *TaskStore) LoadTask(ctx context.Context, key string) ([]byte, error) {
	return s.recs.load(ctx, key)
}

// SaveTask stores rec at key, expiring ttl after now.
func (s *TaskStore) SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	return s.recs.save(ctx, key, rec, ttl)
}

// AddTask stores rec at key, expiring ttl after now, only if there is no
// record there (SET NX): it reports whether it did.
func (s *TaskStore) AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.add(ctx, key, rec, ttl)
}

// ReplaceTask stores rec at key, expiring ttl after now, only if the
// record there is old (one script): it reports whether it did.
func (s *TaskStore) ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.replace(ctx, key, old, rec, ttl)
}

// DeleteTask removes the record at key.
func (s *TaskStore) DeleteTask(ctx context.Context, key string) error {
	return s.recs.remove(ctx, key)
}
