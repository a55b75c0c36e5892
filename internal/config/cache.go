package config

import (
	"strconv"
	"time"
)

// cache returns the "cache" member f of a server: true (the default
// cache), false (no cache, whatever the client's own settings say) or an
// object {"defaultTtl": "30s", "maxTtl": "10m", "maxEntries": 500}. It
// returns nil when f is none of these.
func (p *parser) cache(f member, path string) *Cache {
	switch f.val[0] {
	case 't':
		return &Cache{}
	case 'f':
		return &Cache{Off: true}
	case '{':
	default:
		p.errorf(f.off, path, `want true, false or an object such as {"defaultTtl": "30s", "maxTtl": "10m", "maxEntries": 500}, not %s`, jsonKind(f.val))
		return nil
	}
	cfg := &Cache{}
	for _, e := range p.members(f.val, f.off, path, "key") {
		epath := joinPath(path, e.key)
		switch e.key {
		case "defaultTtl":
			cfg.DefaultTTL = p.cacheDuration(e, epath)
		case "maxTtl":
			cfg.MaxTTL = p.cacheDuration(e, epath)
		case "maxEntries":
			cfg.MaxEntries = p.cacheEntries(e, epath)
		case "ttl":
			p.errorf(e.keyOff, epath, `unknown cache member "ttl": how long to keep results that carry no caching hints is "defaultTtl"; a server's own ttlMs is capped by "maxTtl"`)
		default:
			p.errorf(e.keyOff, epath, `unknown cache member %q; want "defaultTtl", "maxTtl" or "maxEntries"`, e.key)
		}
	}
	return cfg
}

// cacheDuration returns the duration e: a number of seconds, or a duration
// string such as "30s". null is zero.
func (p *parser) cacheDuration(e member, path string) time.Duration {
	if e.val[0] == 'n' {
		return 0
	}
	return p.duration(e, path, "", "negative duration %s")
}

// cacheEntries returns the entry count e, a non-negative integer.
func (p *parser) cacheEntries(e member, path string) int {
	if e.val[0] == 'n' {
		return 0
	}
	n, err := strconv.ParseInt(string(e.val), 10, 32)
	if err != nil || n < 0 {
		p.errorf(e.off, path, "want a number of entries (a whole number, 0 for the default of %d), not %s", DefaultCacheEntries, e.val)
		return 0
	}
	return int(n)
}
