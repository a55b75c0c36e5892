package mcpadapter

import (
	"strconv"
	"time"
)

// cache returns the "cache" member f of a server: true (the default
// cache), false (no cache, whatever ClientOptions.Cache says) or an object
// {"defaultTtl": "30s", "maxTtl": "10m", "maxEntries": 500}, whose members
// are CacheConfig's DefaultTTL, MaxTTL and MaxEntries.
func (p *configParser) cache(f member, path string) (cfg *CacheConfig, off bool) {
	switch f.val[0] {
	case 't':
		return &CacheConfig{}, false
	case 'f':
		return nil, true
	case '{':
	default:
		p.errorf(f.off, path, `want true, false or an object such as {"defaultTtl": "30s", "maxTtl": "10m", "maxEntries": 500}, not %s`, jsonKind(f.val))
		return nil, false
	}
	cfg = &CacheConfig{}
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
	return cfg, false
}

// cacheDuration returns the duration e: a number of seconds, or a duration
// string such as "30s". null is zero.
func (p *configParser) cacheDuration(e member, path string) time.Duration {
	if e.val[0] == 'n' {
		return 0
	}
	return p.duration(e, path, "", "negative duration %s")
}

// cacheEntries returns the entry count e, a non-negative integer.
func (p *configParser) cacheEntries(e member, path string) int {
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

// cacheConfig returns the cache settings of a client of sc whose
// ClientOptions.Cache is base: the config's settings over base's (whose
// Store is kept), nil for "cache": false, base when the config says
// nothing.
func (sc *ServerConfig) cacheConfig(base *CacheConfig) *CacheConfig {
	switch {
	case sc.NoCache:
		return nil
	case sc.Cache == nil:
		return base
	}
	out := &CacheConfig{}
	if base != nil {
		*out = *base
	}
	if sc.Cache.DefaultTTL > 0 {
		out.DefaultTTL = sc.Cache.DefaultTTL
	}
	if sc.Cache.MaxTTL > 0 {
		out.MaxTTL = sc.Cache.MaxTTL
	}
	if sc.Cache.MaxEntries > 0 {
		out.MaxEntries = sc.Cache.MaxEntries
	}
	return out
}
