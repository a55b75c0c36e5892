package mcpadapter_test

import (
	"context"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// agingStore is a CacheStore whose entries a test ages instead of waiting:
// after pass(d), every entry stored before looks d older (its Expires d
// earlier); entries stored after are as the client made them.
type agingStore struct {
	mcpadapter.CacheStore
	mu  sync.Mutex
	age time.Duration
}

func newAgingStore() *agingStore {
	return &agingStore{CacheStore: mcpadapter.NewMemoryCacheStore(0)}
}

// pass makes d go by for the entries stored so far.
func (s *agingStore) pass(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.age += d
}

func (s *agingStore) Get(ctx context.Context, key string) (mcpadapter.CacheEntry, bool) {
	e, ok := s.CacheStore.Get(ctx, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Expires = e.Expires.Add(-s.age)
	return e, ok
}

func (s *agingStore) Set(ctx context.Context, key string, e mcpadapter.CacheEntry) {
	s.mu.Lock()
	e.Expires = e.Expires.Add(s.age)
	s.mu.Unlock()
	s.CacheStore.Set(ctx, key, e)
}
