package gateway

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Reload replaces the gateway's servers with servers, while clients stay
// connected: a server no longer in the list is stopped and its tools,
// prompts and resources leave the lists; a new one is started; one whose
// entry changed is stopped and started again with the new entry; one that
// is the same keeps its connection (and its process). Clients get
// list_changed notifications for what changed. Reload returns once every
// new server has come up or failed once, or ctx ends; a new server that
// fails is reported and tried again in the background, as at Start.
//
// The new list is checked whole before anything changes: a refused list
// (no servers, two with one name, an entry that cannot be built) leaves
// the gateway as it was and the error names every problem.
//
// The gateway's options stay as they were, the prefix mode included:
// with PrefixAuto the names are prefixed or not as they were at New, so
// that adding a server does not rename the tools clients know. Reload
// must be called after Start.
//
// An error that wraps ErrReloadRefused left the servers as they were; any
// other (ctx ended before every new server came up or failed once) came
// after the new servers were taken, and those not up keep coming up in
// the background.
func (g *Gateway) Reload(ctx context.Context, servers []Server) error {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	switch {
	case !g.started.Load():
		return &refusedError{errors.New("gateway: Reload before Start")}
	case g.ctx.Err() != nil:
		return &refusedError{errors.New("gateway: Reload after Close")}
	case len(servers) == 0:
		return &refusedError{errors.New("gateway: the new config is refused: it has no servers; the servers stay as they were")}
	}
	// The new entries' secrets are blanked out from here on: building an
	// entry may log them or fail naming them, refused or not.
	g.red.add(servers)
	cur := make(map[string]*upstream)
	for _, u := range g.servers() {
		cur[u.name] = u
	}
	var next, started []*upstream
	var errs []error
	seen := make(map[string]bool)
	for _, s := range servers {
		if s.Name == "" && s.Config != nil {
			s.Name = s.Config.Name
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("two servers are named %q", s.Name))
			continue
		}
		seen[s.Name] = true
		if u := cur[s.Name]; u != nil && sameServer(u.spec, s) {
			next = append(next, u)
			continue
		}
		u, err := newUpstream(g, s, g.opts.Prefix)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		next, started = append(next, u), append(started, u)
	}
	if len(errs) > 0 {
		for _, u := range started {
			_ = u.close() // built, never connected
		}
		return g.red.err(&refusedError{fmt.Errorf("gateway: the new config is refused; the servers stay as they were: %w", errors.Join(errs...))})
	}
	kept := make(map[*upstream]bool, len(next))
	for _, u := range next {
		kept[u] = true
	}
	g.upsMu.Lock()
	g.ups = next
	g.upsMu.Unlock()
	g.cat.mu.Lock()
	g.cat.order = next
	g.cat.mu.Unlock()
	for _, u := range cur {
		if !kept[u] {
			g.remove(u)
		}
	}
	for _, u := range started {
		u.ctx, u.stop = context.WithCancel(g.ctx)
	}
	return g.runAll(ctx, started)
}

// ErrReloadRefused is wrapped by the error of a Reload that left the
// servers as they were.
var ErrReloadRefused = errors.New("gateway: the reload is refused")

// refusedError is the error of a Reload that changed nothing: its text is
// err's, and it is ErrReloadRefused.
type refusedError struct{ err error }

func (e *refusedError) Error() string        { return e.err.Error() }
func (e *refusedError) Unwrap() error        { return e.err }
func (e *refusedError) Is(target error) bool { return target == ErrReloadRefused }

// remove stops u, a server Reload took out: its supervisor ends, its items
// leave the catalog, its connection (and process) is closed.
func (g *Gateway) remove(u *upstream) {
	u.stop()
	<-u.done
	g.cat.publish(u, nil, 0)
	if err := u.close(); err != nil {
		g.log.Warn("closing a server removed from the config", "server", u.name, "err", err)
	}
	g.event(Event{Kind: ServerRemoved, Server: u.name})
}

// sameServer reports whether a and b describe the same server: the same
// config entry, or the same target (a URL, a command, the same in-process
// server).
func sameServer(a, b Server) bool {
	if a.Name != b.Name || (a.Config == nil) != (b.Config == nil) || !reflect.DeepEqual(a.SignIn, b.SignIn) || !reflect.DeepEqual(a.Exchange, b.Exchange) {
		return false
	}
	if a.Config != nil {
		return reflect.DeepEqual(*a.Config, *b.Config)
	}
	ta, tb := reflect.ValueOf(a.Target), reflect.ValueOf(b.Target)
	if !ta.IsValid() || !tb.IsValid() || ta.Type() != tb.Type() {
		return false
	}
	if ta.Type().Comparable() {
		return a.Target == b.Target
	}
	return reflect.DeepEqual(a.Target, b.Target) // a Command: its fields
}
