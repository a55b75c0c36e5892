package gateway

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// MemorySessionStore is a SessionStore in this process's memory: for
// gateways in one process, and for tests. Its zero value is ready.
type MemorySessionStore struct {
	mu     sync.Mutex
	recs   map[string]memoryRecord
	claims map[string]memoryClaim
	nclaim int // claims made: those expired are dropped every 256th
}

// memoryClaim is a claim of a request: its owner and when it expires.
type memoryClaim struct {
	owner   string
	expires time.Time
}

type memoryRecord struct {
	rec     []byte
	expires time.Time
}

// LoadSession implements SessionStore.
func (m *MemorySessionStore) LoadSession(_ context.Context, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[id]
	if !ok || time.Now().After(r.expires) {
		delete(m.recs, id)
		return nil, nil
	}
	return append([]byte(nil), r.rec...), nil
}

// SaveSession implements SessionStore.
func (m *MemorySessionStore) SaveSession(_ context.Context, id string, rec []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs == nil {
		m.recs = make(map[string]memoryRecord)
	}
	now := time.Now()
	for k, r := range m.recs {
		if now.After(r.expires) {
			delete(m.recs, k)
		}
	}
	m.recs[id] = memoryRecord{rec: append([]byte(nil), rec...), expires: now.Add(ttl)}
	return nil
}

// ReplaceSession implements SessionStore.
func (m *MemorySessionStore) ReplaceSession(_ context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if r, ok := m.recs[id]; !ok || now.After(r.expires) || !bytes.Equal(r.rec, old) {
		return false, nil
	}
	m.recs[id] = memoryRecord{rec: append([]byte(nil), rec...), expires: now.Add(ttl)}
	return true, nil
}

// DeleteSession implements SessionStore.
func (m *MemorySessionStore) DeleteSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, id)
	return nil
}

// ClaimRequest implements SessionStore.
func (m *MemorySessionStore) ClaimRequest(_ context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	k := claimRecordKey(session, request)
	if c, ok := m.claims[k]; ok && !now.After(c.expires) {
		return false, nil
	}
	if m.claims == nil {
		m.claims = make(map[string]memoryClaim)
	}
	if m.nclaim++; m.nclaim%256 == 0 {
		for k, c := range m.claims {
			if now.After(c.expires) {
				delete(m.claims, k)
			}
		}
	}
	m.claims[k] = memoryClaim{owner: owner, expires: now.Add(ttl)}
	return true, nil
}

// RenewRequest implements SessionStore.
func (m *MemorySessionStore) RenewRequest(_ context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	k := claimRecordKey(session, request)
	c, ok := m.claims[k]
	if !ok || now.After(c.expires) || c.owner != owner {
		return false, nil
	}
	m.claims[k] = memoryClaim{owner: owner, expires: now.Add(ttl)}
	return true, nil
}

// ReleaseRequest implements SessionStore.
func (m *MemorySessionStore) ReleaseRequest(_ context.Context, session, request, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := claimRecordKey(session, request)
	if c, ok := m.claims[k]; ok && c.owner == owner {
		delete(m.claims, k)
	}
	return nil
}

// claimRecordKey is the key of a claim in a MemorySessionStore.
func claimRecordKey(session, request string) string { return session + "\x00" + request }
