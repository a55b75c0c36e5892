package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// TaskStore keeps the records of a gateway's tasks in Redis, so that
// every replica answers every request about a task: it is a
// gateway.TaskStore. A record is one key with its lifetime as its expiry.
type TaskStore struct {
	r       runner
	prefix  string
	timeout time.Duration
}

// NewTaskStore returns a TaskStore on rdb. Options.Timeout bounds each
// operation.
func NewTaskStore(rdb redis.UniversalClient, opts *Options) *TaskStore {
	return &TaskStore{r: newRunner(rdb), prefix: opts.prefix(), timeout: opts.timeout()}
}

func (s *TaskStore) key(k string) string { return s.prefix + "task:" + k }

// LoadTask returns the record at key, or nil and no error when there is
// none.
func (s *TaskStore) LoadTask(ctx context.Context, key string) ([]byte, error) {
	b, err := call(s.r, ctx, s.timeout, func(ctx context.Context) ([]byte, error) {
		return s.r.rdb.Get(ctx, s.key(key)).Bytes()
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: loading a task record at %s: %w", s.r.where, err)
	}
	return b, nil
}

// SaveTask stores rec at key, expiring ttl after now.
func (s *TaskStore) SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	_, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (string, error) {
		return s.r.rdb.Set(ctx, s.key(key), rec, max(ttl, time.Millisecond)).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: saving a task record at %s: %w", s.r.where, err)
	}
	return nil
}

// AddTask stores rec at key, expiring ttl after now, only if there is no
// record there (SET NX): it reports whether it did.
func (s *TaskStore) AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error) {
	ok, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (bool, error) {
		return s.r.rdb.SetNX(ctx, s.key(key), rec, max(ttl, time.Millisecond)).Result()
	})
	if err != nil {
		return false, fmt.Errorf("redisstore: adding a task record at %s: %w", s.r.where, err)
	}
	return ok, nil
}

// ReplaceTask stores rec at key, expiring ttl after now, only if the
// record there is old (one script): it reports whether it did.
func (s *TaskStore) ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	n, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return replaceSession.Run(ctx, s.r.rdb, []string{s.key(key)}, old, rec, max(ttl.Milliseconds(), 1)).Int64()
	})
	if err != nil {
		return false, fmt.Errorf("redisstore: replacing a task record at %s: %w", s.r.where, err)
	}
	return n == 1, nil
}

// DeleteTask removes the record at key.
func (s *TaskStore) DeleteTask(ctx context.Context, key string) error {
	_, err := call(s.r, ctx, s.timeout, func(ctx context.Context) (int64, error) {
		return s.r.rdb.Del(ctx, s.key(key)).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: deleting a task record at %s: %w", s.r.where, err)
	}
	return nil
}
