package cache

import (
	"container/list"
	"context"
	"strings"
	"sync"
	"time"
)

// A Store holds the entries of the response cache.
// Its methods may be called by many goroutines at once.
//
// Keys are opaque strings made by this package. They name the server (by a
// hash of its URL or command), the method, the page cursor or resource URI
// and, for private entries, a hash of the caller's credentials; they never
// hold a credential in clear. Keys that share a server and a method share a
// prefix, which DeletePrefix uses to invalidate a listing on every page and
// for every caller at once.
//
// A store shared by several Clients (or processes, for a remote store) lets
// them share "public" results. A store may drop entries at any time; the
// cache checks Entry.Expires itself, so a store need not.
type Store interface {
	// Get returns the entry stored under key, if any.
	Get(ctx context.Context, key string) (Entry, bool)
	// Set stores e under key, replacing any entry there.
	Set(ctx context.Context, key string, e Entry)
	// Delete removes the entry stored under key, if any.
	Delete(ctx context.Context, key string)
	// DeletePrefix removes every entry whose key starts with prefix.
	DeletePrefix(ctx context.Context, prefix string)
}

// A Entry is one cached result.
type Entry struct {
	// Value is the result, encoded as JSON.
	Value []byte
	// Expires is when the entry stops being fresh.
	Expires time.Time
}

// DefaultEntries is the size of the in-memory store New makes when
// Config.Store is nil and Config.MaxEntries is zero.
const DefaultEntries = 1024

// NewMemoryStore returns an in-memory Store that holds at most
// maxEntries entries (DefaultEntries if maxEntries <= 0), dropping the
// least recently used first, and expired entries as it finds them. It is
// safe for concurrent use, so several Clients may share it.
func NewMemoryStore(maxEntries int) Store {
	if maxEntries <= 0 {
		maxEntries = DefaultEntries
	}
	return &memoryStore{max: maxEntries, items: make(map[string]*list.Element), order: list.New()}
}

// memoryStore is an LRU map: order holds *memoryItem, most recent first.
type memoryStore struct {
	mu    sync.Mutex
	max   int
	items map[string]*list.Element
	order *list.List
}

type memoryItem struct {
	key   string
	entry Entry
}

func (m *memoryStore) Get(_ context.Context, key string) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return Entry{}, false
	}
	it := el.Value.(*memoryItem)
	if !time.Now().Before(it.entry.Expires) {
		m.remove(el)
		return Entry{}, false
	}
	m.order.MoveToFront(el)
	return it.entry, true
}

func (m *memoryStore) Set(_ context.Context, key string, e Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		el.Value.(*memoryItem).entry = e
		m.order.MoveToFront(el)
		return
	}
	m.items[key] = m.order.PushFront(&memoryItem{key: key, entry: e})
	for m.order.Len() > m.max {
		m.remove(m.order.Back())
	}
}

func (m *memoryStore) Delete(_ context.Context, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
}

func (m *memoryStore) DeletePrefix(_ context.Context, prefix string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, el := range m.items {
		if strings.HasPrefix(key, prefix) {
			m.remove(el)
		}
	}
}

// remove drops el; m.mu is held.
func (m *memoryStore) remove(el *list.Element) {
	delete(m.items, el.Value.(*memoryItem).key)
	m.order.Remove(el)
}

// Len returns the number of entries held, expired ones included.
func (m *memoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}
