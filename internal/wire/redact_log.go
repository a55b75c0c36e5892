package wire

import (
	"context"
	"log/slog"
)

// RedactErrors returns a handler that passes h its records with every
// attribute whose value is an error written as the error's text with
// its credentials hidden (RedactURLSecrets): a server's error quotes
// what the server wrote (its stdout, its JSON-RPC error text), and a log
// record's "err" would show it as it is. Other values pass as they are.
func RedactErrors(h slog.Handler) slog.Handler {
	if r, ok := h.(errRedactingHandler); ok {
		return r
	}
	return errRedactingHandler{h: h}
}

type errRedactingHandler struct{ h slog.Handler }

func (r errRedactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return r.h.Enabled(ctx, l)
}

func (r errRedactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	has := false
	rec.Attrs(func(a slog.Attr) bool {
		has = holdsError(a.Value)
		return !has
	})
	if !has {
		return r.h.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, rec.Message, rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactErrAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r errRedactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = redactErrAttr(a)
	}
	return errRedactingHandler{h: r.h.WithAttrs(clean)}
}

func (r errRedactingHandler) WithGroup(name string) slog.Handler {
	return errRedactingHandler{h: r.h.WithGroup(name)}
}

// holdsError reports whether v is an error, or a group holding one.
func holdsError(v slog.Value) bool {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindAny:
		_, ok := v.Any().(error)
		return ok
	case slog.KindGroup:
		for _, a := range v.Group() {
			if holdsError(a.Value) {
				return true
			}
		}
	}
	return false
}

// redactErrAttr returns a with an error value as its redacted text.
func redactErrAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && err != nil {
			return slog.String(a.Key, RedactURLSecrets(err.Error()))
		}
	case slog.KindGroup:
		g := v.Group()
		clean := make([]slog.Attr, len(g))
		for i, x := range g {
			clean[i] = redactErrAttr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(clean...)}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
