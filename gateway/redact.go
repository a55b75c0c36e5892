package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// minSecretLen is the shortest config value treated as a secret: shorter
// ones ("1", "true") would blank out ordinary words.
const minSecretLen = 6

const redacted = "[REDACTED]"

// A redactor blanks out the secrets of the servers' config entries (env
// and header values, bearer tokens, the client secrets of OAuth and of
// the grants, the password and query values of URLs) from whatever the
// gateway shows: errors to clients, events, statuses and log lines. A
// server may print its own environment on its way down; that text must
// not carry the secrets further.
type redactor struct {
	mu      sync.Mutex
	secrets []string
	r       atomic.Pointer[strings.Replacer] // nil: no secrets
}

func newRedactor(servers []Server) *redactor {
	r := &redactor{}
	r.add(servers)
	return r
}

// add adds the secrets of servers' config entries to those blanked out
// (the old ones stay: a server that left the config may still be named
// in what is under way).
func (r *redactor) add(servers []Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := func(s string) {
		if len(s) < minSecretLen {
			return
		}
		// Also as it is written inside a JSON string (a payload, an
		// error's body): with & < > escaped, as encoding/json does, and
		// without.
		r.secrets = append(r.secrets, s, jsonString(s, true), jsonString(s, false))
	}
	for _, s := range servers {
		if s.SignIn != nil {
			add(s.SignIn.ClientSecret)
		}
		if s.Exchange != nil {
			add(s.Exchange.ClientSecret)
			if s.Exchange.IDJAG != nil {
				add(s.Exchange.IDJAG.ClientSecret)
			}
		}
		sc := s.Config
		if sc == nil {
			continue
		}
		for _, v := range sc.Env {
			add(v)
		}
		for _, v := range sc.Headers {
			add(v)
			if _, tok, ok := strings.Cut(v, " "); ok {
				add(tok) // "Bearer <token>"
			}
		}
		if a := sc.Auth; a != nil {
			add(a.Bearer)
			if a.OAuth != nil {
				add(a.OAuth.ClientSecret)
			}
			if a.Grant != nil {
				add(a.Grant.ClientSecret)
				add(a.Grant.IdPClientSecret)
				add(a.Grant.ASClientSecret)
			}
		}
		if u, err := url.Parse(sc.URL); err == nil {
			if p, ok := u.User.Password(); ok {
				add(p)
			}
			for _, vs := range u.Query() {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	if len(r.secrets) == 0 {
		return
	}
	// Longest first, so that a secret inside another is not cut in two.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	r.secrets = slices.Compact(r.secrets)
	pairs := make([]string, 0, 2*len(r.secrets))
	for _, s := range r.secrets {
		pairs = append(pairs, s, redacted)
	}
	r.r.Store(strings.NewReplacer(pairs...))
}

// jsonString returns s as it is written between the quotes of a JSON
// string.
func jsonString(s string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// string returns s without the secrets.
func (r *redactor) string(s string) string {
	rep := r.r.Load()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

// err returns err with the secrets blanked out of its message; errors.Is
// and errors.As still see the original.
func (r *redactor) err(err error) error {
	if err == nil || r.r.Load() == nil {
		return err
	}
	if msg := err.Error(); r.string(msg) != msg {
		return &redactedError{err: err, msg: r.string(msg)}
	}
	return err
}

type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// handler returns h with the secrets blanked out of every message and
// attribute.
func (r *redactor) handler(h slog.Handler) slog.Handler {
	if rh, ok := h.(*redactingHandler); ok && rh.r == r {
		return h
	}
	return &redactingHandler{h: h, r: r}
}

type redactingHandler struct {
	h slog.Handler
	r *redactor
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.h.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	if h.r.r.Load() == nil {
		return h.h.Handle(ctx, rec) // no secrets (yet)
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.r.string(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &redactingHandler{h: h.h.WithAttrs(clean), r: h.r}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{h: h.h.WithGroup(name), r: h.r}
}

func (h *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.string(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, x := range g {
			clean[i] = h.attr(x)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if s := fmt.Sprint(v.Any()); h.r.string(s) != s {
			return slog.String(a.Key, h.r.string(s))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// rpcErr returns err, an answer to a client, without the secrets: of a
// JSON-RPC error, neither its message nor its data (a server's error may
// quote what it was sent) has them; data the blanking leaves invalid (a
// secret that was a JSON number, say) is dropped.
func (r *redactor) rpcErr(err error) error {
	if we, ok := err.(*jsonrpc.Error); ok && r.r.Load() != nil {
		c := *we
		c.Message = r.string(we.Message)
		if d := r.string(string(we.Data)); d != string(we.Data) {
			c.Data = nil
			if json.Valid([]byte(d)) {
				c.Data = json.RawMessage(d)
			}
		}
		return &c
	}
	return r.err(err)
}
