package resourceserver

import (
	"crypto/sha256"
	"sync"
	"time"
)

// grantCache keeps the grants of tokens already checked (a JWT's
// signature and claims, an introspection answer), keyed by the token's
// SHA-256, each until its own time and never past the token's expiry. It
// is bounded: when full it first drops what ran out, then any entry.
type grantCache struct {
	ttl     time.Duration // <0: nothing is kept
	maxSize int

	mu sync.Mutex
	m  map[[32]byte]cached
}

type cached struct {
	g     *grant
	until time.Time
}

func newGrantCache(ttl time.Duration, maxSize int) *grantCache {
	return &grantCache{ttl: ttl, maxSize: maxSize, m: make(map[[32]byte]cached)}
}

func tokenKey(tok string) [32]byte { return sha256.Sum256([]byte(tok)) }

// get returns the grant kept for key, if it is still good at now.
func (c *grantCache) get(key [32]byte, now time.Time) *grant {
	if c.ttl < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil
	}
	if !now.Before(e.until) {
		delete(c.m, key)
		return nil
	}
	return e.g
}

// put keeps g for the cache's TTL, at most until the grant expires.
func (c *grantCache) put(key [32]byte, g *grant, now time.Time) {
	if c.ttl < 0 {
		return
	}
	until := now.Add(c.ttl)
	if !g.expires.IsZero() && g.expires.Before(until) {
		until = g.expires
	}
	if !until.After(now) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.maxSize {
		for k, v := range c.m {
			if !now.Before(v.until) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.maxSize {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[key] = cached{g, until}
}
