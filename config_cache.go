package mcpadapter

// cacheConfig returns the cache settings of a client of sc whose
// ClientOptions.Cache is base: base when the config says nothing, nil for
// "cache": false, else the config's settings over base's (whose Store is
// kept).
func (sc *ServerConfig) cacheConfig(base *CacheConfig) *CacheConfig {
	switch {
	case sc.Cache == nil:
		return base
	case sc.Cache.Off:
		return nil
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
