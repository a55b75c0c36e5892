package gateway

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// TaskStore keeps records of the gateway's tasks shared by replicas, by
// key (TaskOptions.Store); the redisstore and pgstore modules' TaskStore
// types implement it. Records are the gateway's (JSON); a store keeps
// them as bytes. Implementations must be safe for concurrent use.
type TaskStore interface {
	// LoadTask returns the record at key, or nil and no error when there
	// is none (never saved, deleted, or expired).
	LoadTask(ctx context.Context, key string) ([]byte, error)
	// SaveTask stores rec at key, to expire ttl after now.
	SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error
	// AddTask stores rec at key, to expire ttl after now, only if there
	// is no record there (none saved, or deleted, or expired), in one
	// step; it reports whether it did.
	AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error)
	// ReplaceTask stores rec at key, to expire ttl after now, only if the
	// record there is old (byte for byte, not deleted, not expired), in
	// one step; it reports whether it did.
	ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error)
	// DeleteTask removes the record at key; deleting a record that is not
	// there is not an error.
	DeleteTask(ctx context.Context, key string) error
}

// MemoryTaskStore is a TaskStore in this process's memory: for gateways
// in one process, and for tests. Its zero value is ready.
type MemoryTaskStore struct {
	mu   sync.Mutex
	recs map[string]memoryRecord
}

// live returns the record at key if it has not expired; m.mu is held.
func (m *MemoryTaskStore) live(key string, now time.Time) (memoryRecord, bool) {
	r, ok := m.recs[key]
	if ok && now.After(r.expires) {
		delete(m.recs, key)
		return memoryRecord{}, false
	}
	return r, ok
}

// put stores rec at key; m.mu is held.
func (m *MemoryTaskStore) put(key string, rec []byte, ttl time.Duration, now time.Time) {
	if m.recs == nil {
		m.recs = make(map[string]memoryRecord)
	}
	if len(m.recs)%64 == 0 {
		for k, r := range m.recs {
			if now.After(r.expires) {
				delete(m.recs, k)
			}
		}
	}
	m.recs[key] = memoryRecord{rec: bytes.Clone(rec), expires: now.Add(ttl)}
}

// LoadTask implements TaskStore.
func (m *MemoryTaskStore) LoadTask(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.live(key, time.Now())
	if !ok {
		return nil, nil
	}
	return bytes.Clone(r.rec), nil
}

// SaveTask implements TaskStore.
func (m *MemoryTaskStore) SaveTask(_ context.Context, key string, rec []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(key, rec, ttl, time.Now())
	return nil
}

// AddTask implements TaskStore.
func (m *MemoryTaskStore) AddTask(_ context.Context, key string, rec []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if _, ok := m.live(key, now); ok {
		return false, nil
	}
	m.put(key, rec, ttl, now)
	return true, nil
}

// ReplaceTask implements TaskStore.
func (m *MemoryTaskStore) ReplaceTask(_ context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if r, ok := m.live(key, now); !ok || !bytes.Equal(r.rec, old) {
		return false, nil
	}
	m.put(key, rec, ttl, now)
	return true, nil
}

// DeleteTask implements TaskStore.
func (m *MemoryTaskStore) DeleteTask(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, key)
	return nil
}
