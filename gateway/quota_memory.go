package gateway

import (
	"context"
	"sync"
	"time"
)

// memoryLimits is the LimitStore of one process: the same algorithms as
// the shared stores (GCRA for rates, leases with a TTL for caps), in maps
// that drop what ran out when they grow.
type memoryLimits struct {
	now func() time.Time

	mu     sync.Mutex
	rates  map[string]time.Time            // key -> when the next call is due
	leases map[string]map[string]time.Time // key -> lease -> expiry
	swept  int                             // entries after the last sweep
}

func newMemoryLimits() *memoryLimits {
	return &memoryLimits{now: time.Now, rates: make(map[string]time.Time), leases: make(map[string]map[string]time.Time)}
}

func (m *memoryLimits) Take(_ context.Context, key string, interval time.Duration, burst int) (bool, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweep(now)
	tat := m.rates[key]
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	if wait := next.Sub(now) - time.Duration(max(burst, 1))*interval; wait > 0 {
		return false, wait, nil
	}
	m.rates[key] = next
	return true, 0, nil
}

func (m *memoryLimits) Acquire(_ context.Context, key, lease string, maxHeld int, ttl time.Duration) (bool, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweep(now)
	held := m.leases[key]
	var first time.Time
	for id, exp := range held {
		if !exp.After(now) {
			delete(held, id)
		} else if first.IsZero() || exp.Before(first) {
			first = exp
		}
	}
	if _, ok := held[lease]; !ok && len(held) >= maxHeld {
		return false, max(first.Sub(now), time.Millisecond), nil
	}
	if held == nil {
		held = make(map[string]time.Time)
		m.leases[key] = held
	}
	held[lease] = now.Add(ttl)
	return true, 0, nil
}

func (m *memoryLimits) Renew(_ context.Context, key, lease string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	exp, ok := m.leases[key][lease]
	if !ok || !exp.After(now) {
		return false, nil
	}
	m.leases[key][lease] = now.Add(ttl)
	return true, nil
}

func (m *memoryLimits) Release(_ context.Context, key, lease string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.leases[key], lease)
	if len(m.leases[key]) == 0 {
		delete(m.leases, key)
	}
	return nil
}

// sweep drops the rates and leases that ran out once the maps hold twice
// as many entries as after the last sweep, so they stay within twice
// what is live.
func (m *memoryLimits) sweep(now time.Time) {
	if n := len(m.rates) + len(m.leases); n < 1024 || n < 2*m.swept {
		return
	}
	for k, tat := range m.rates {
		if !tat.After(now) {
			delete(m.rates, k)
		}
	}
	for k, held := range m.leases {
		for id, exp := range held {
			if !exp.After(now) {
				delete(held, id)
			}
		}
		if len(held) == 0 {
			delete(m.leases, k)
		}
	}
	m.swept = len(m.rates) + len(m.leases)
}
