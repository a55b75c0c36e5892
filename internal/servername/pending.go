package servername

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// MaxHeld and MaxHeldBytes bound the log records and callbacks a Pending
// holds while its name is not known, in number and in bytes (Do's size:
// a record's message and attributes, a stderr line); later ones are
// dropped and counted.
const (
	MaxHeld      = 1000
	MaxHeldBytes = 1 << 20
)

// Pending is a server name that is not known yet: it is settled once,
// by the first call to Settle (the server's own name, once it has given
// it) or Name. Log records (Handler) and callbacks (Do) that need the
// name are held until then, in order, and run once it is settled. A
// Pending is safe for concurrent use.
type Pending struct {
	fallback string

	mu       sync.Mutex
	name     string
	settled  bool
	flushing bool // Settle is running the held work
	held     []func(string)
	size     int // the bytes held
	dropped  int
	base     slog.Handler // where the note of dropped records goes, or nil
}

// NewPending returns a Pending whose name is fallback unless Settle
// names it first.
func NewPending(fallback string) *Pending { return &Pending{fallback: fallback} }

// Settle settles the name to name ("" means the fallback) unless it is
// settled already, runs what was held, and returns the settled name.
// Only the first call chooses.
func (p *Pending) Settle(name string) string {
	p.mu.Lock()
	if p.settled {
		n := p.name
		p.mu.Unlock()
		return n
	}
	if name == "" {
		name = p.fallback
	}
	p.name, p.settled, p.flushing = name, true, true
	for {
		held := p.held
		p.held, p.size = nil, 0
		if len(held) == 0 {
			break
		}
		p.mu.Unlock()
		for _, f := range held {
			f(name)
		}
		p.mu.Lock()
	}
	p.flushing = false
	dropped, base := p.dropped, p.base
	p.mu.Unlock()
	if dropped > 0 && base != nil {
		r := slog.NewRecord(time.Now(), slog.LevelWarn, "log records of the server's start were dropped while its name was not known", 0)
		r.AddAttrs(slog.String("server", name), slog.Int("dropped", dropped))
		_ = base.Handle(context.Background(), r)
	}
	return name
}

// Name returns the settled name, settling it to the fallback if it is not
// settled yet.
func (p *Pending) Name() string { return p.Settle("") }

// Peek returns the settled name, or the fallback while it is not
// settled; it does not settle it.
func (p *Pending) Peek() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.settled {
		return p.name
	}
	return p.fallback
}

// Do runs f with the name: now if it is settled, else when it is (in
// the order Do was called). size is what f holds, in bytes: past MaxHeld
// waiting callbacks or MaxHeldBytes held, f is dropped.
func (p *Pending) Do(size int, f func(name string)) {
	p.mu.Lock()
	if p.settled && !p.flushing {
		name := p.name
		p.mu.Unlock()
		f(name)
		return
	}
	if len(p.held) >= MaxHeld || p.size+size > MaxHeldBytes {
		p.dropped++
	} else {
		p.held = append(p.held, f)
		p.size += size
	}
	p.mu.Unlock()
}

// Handler returns a handler that writes to base with a "server"
// attribute set to the settled name (replacing any "server" attribute of
// the record); records logged before the name is settled are held (Do)
// and written once it is.
func (p *Pending) Handler(base slog.Handler) slog.Handler {
	p.mu.Lock()
	if p.base == nil {
		p.base = base
	}
	p.mu.Unlock()
	return &pendingHandler{p: p, base: base}
}

type pendingHandler struct {
	p    *Pending
	base slog.Handler
}

func (h *pendingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.base.Enabled(ctx, level)
}

func (h *pendingHandler) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	h.p.Do(recordSize(r), func(name string) {
		out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
		out.AddAttrs(slog.String("server", name))
		r.Attrs(func(a slog.Attr) bool {
			if a.Key != "server" {
				out.AddAttrs(a)
			}
			return true
		})
		_ = h.base.Handle(ctx, out)
	})
	return nil
}

// recordSize is about the bytes r holds: its message and attributes.
func recordSize(r slog.Record) int {
	n := len(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		n += attrSize(a)
		return true
	})
	return n
}

func attrSize(a slog.Attr) int {
	v := a.Value.Resolve()
	if v.Kind() != slog.KindGroup {
		return len(a.Key) + len(v.String())
	}
	n := len(a.Key)
	for _, g := range v.Group() {
		n += attrSize(g)
	}
	return n
}

func (h *pendingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &pendingHandler{p: h.p, base: h.base.WithAttrs(attrs)}
}

func (h *pendingHandler) WithGroup(name string) slog.Handler {
	return &pendingHandler{p: h.p, base: h.base.WithGroup(name)}
}

// FromServerInfo returns the name for a server that calls itself raw
// (its serverInfo.name), sanitised as Sanitize does, or "" when raw has
// no ASCII letter or digit to make a name of (empty, "../", only
// punctuation or other scripts): the caller's fallback names it then.
func FromServerInfo(raw string) string {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return Sanitize(raw)
		}
	}
	return ""
}
