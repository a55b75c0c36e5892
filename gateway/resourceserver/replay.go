package resourceserver

import (
	"context"
	"sync"
	"time"
)

// DefaultReplayPerPrincipal bounds the live DPoP proofs remembered for one
// principal when Options.MaxReplayPerPrincipal is zero.
const DefaultReplayPerPrincipal = 10_000

// A ReplayStore remembers the ids of DPoP proofs (their key's thumbprint
// and jti) until they are too old to be accepted, so that each proof is
// accepted once. Replicas that share one (a redisstore.LimitStore, a
// pgstore.LimitStore) accept a proof once between them.
type ReplayStore interface {
	// Once records id in bucket (one per principal) for ttl: fresh is
	// true when it was not there. A bucket holds at most maxLive live
	// ids; when it is full, full is true and id is not recorded.
	Once(ctx context.Context, bucket, id string, ttl time.Duration, maxLive int) (fresh, full bool, err error)
}

// memoryReplay is the ReplayStore of one process, bounded per bucket and
// overall.
type memoryReplay struct {
	maxAll int

	mu      sync.Mutex
	buckets map[string]map[string]time.Time // bucket -> id -> when it may be forgotten
	n       int
}

func newMemoryReplay(maxAll int) *memoryReplay {
	return &memoryReplay{maxAll: maxAll, buckets: make(map[string]map[string]time.Time)}
}

func (m *memoryReplay) Once(_ context.Context, bucket, id string, ttl time.Duration, maxLive int) (fresh, full bool, err error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.buckets[bucket]
	if t, ok := b[id]; ok && now.Before(t) {
		return false, false, nil
	}
	if len(b) >= maxLive {
		m.forget(bucket, b, now)
		if len(b) >= maxLive {
			return false, true, nil
		}
	}
	if m.n >= m.maxAll {
		for k, b := range m.buckets {
			m.forget(k, b, now)
		}
		if m.n >= m.maxAll {
			return false, true, nil
		}
	}
	if b == nil {
		b = make(map[string]time.Time)
		m.buckets[bucket] = b
	}
	if _, ok := b[id]; !ok {
		m.n++
	}
	b[id] = now.Add(ttl)
	return true, false, nil
}

// forget drops the ids of bucket that ran out.
func (m *memoryReplay) forget(bucket string, b map[string]time.Time, now time.Time) {
	for id, t := range b {
		if !now.Before(t) {
			delete(b, id)
			m.n--
		}
	}
	if len(b) == 0 {
		delete(m.buckets, bucket)
	}
}
