package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TaskStore keeps the records of a gateway's tasks in PostgreSQL, so that
// every replica answers every request about a task: it is a
// gateway.TaskStore. A record is one row with the time it expires, by the
// database's clock; rows that ran out are deleted now and then by the
// store's own operations.
type TaskStore struct{ recs *records }

// NewTaskStore checks the store's table on pool (creating it when it is
// missing, as Migrate does) and returns a TaskStore on it.
// Options.Timeout bounds each operation.
func NewTaskStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*TaskStore, error) {
	recs, err := newRecords(ctx, pool, opts, "tasks", "a task record")
	if err != nil {
		return nil, err
	}
	return &TaskStore{recs: recs}, nil
}

// LoadTask returns the record at key, or nil and no error when there is
// none (or it expired).
func (s *TaskStore) LoadTask(ctx context.Context, key string) ([]byte, error) {
	return s.recs.load(ctx, key)
}

// SaveTask stores rec at key, expiring ttl after now.
func (s *TaskStore) SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	return s.recs.save(ctx, key, rec, ttl)
}

// AddTask stores rec at key, expiring ttl after now, only if there is no
// record there or it expired (one INSERT): it reports whether it did.
func (s *TaskStore) AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.add(ctx, key, rec, ttl)
}

// ReplaceTask stores rec at key, expiring ttl after now, only if the
// record there is old and has not expired (one UPDATE): it reports
// whether it did.
func (s *TaskStore) ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.replace(ctx, key, old, rec, ttl)
}

// DeleteTask removes the record at key.
func (s *TaskStore) DeleteTask(ctx context.Context, key string) error {
	return s.recs.remove(ctx, key)
}
