package searchpair

import "sync"

// Partitions keeps a C per partition (a principal and its identity
// headers), at most Max of them: making one more forgets the one asked
// for least recently (Max <= 0 keeps one). The zero value is ready to use.
type Partitions[C any] struct {
	Max int

	mu   sync.Mutex
	m    map[string]*partition[C]
	tick uint64 // counts the calls of Of: the order of use
}

type partition[C any] struct {
	c    C
	used uint64 // the tick it was last asked for at
}

// Of returns the C of key, made (zero) on first use.
func (p *Partitions[C]) Of(key string) *C {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tick++
	if p.m == nil {
		p.m = make(map[string]*partition[C])
	}
	e := p.m[key]
	if e == nil {
		if len(p.m) >= p.Max {
			var lru string
			at := p.tick
			for k, o := range p.m {
				if o.used < at {
					lru, at = k, o.used
				}
			}
			delete(p.m, lru)
		}
		e = &partition[C]{}
		p.m[key] = e
	}
	e.used = p.tick
	return &e.c
}

// Removed returns the tools (name → server) of a catalog that a new
// listing (now) no longer has: those of old missing from now, and those
// removed before (prev) still missing.
func Removed[T any](old, now map[string]T, prev map[string]string, server func(T) string) map[string]string {
	removed := make(map[string]string)
	for name, t := range old {
		if _, ok := now[name]; !ok {
			removed[name] = server(t)
		}
	}
	for name, s := range prev {
		if _, ok := now[name]; !ok && removed[name] == "" {
			removed[name] = s
		}
	}
	return removed
}
