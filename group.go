package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/config"
	"github.com/mcpadapter/mcpadapter/internal/httplayer"
	"github.com/mcpadapter/mcpadapter/internal/wire"
)

// A Group is several servers used together, as one list of tools: the
// servers of a Config. Discovery fans out to every server at once; each
// tool call goes to the server that owns the tool, with that server's own
// transport, headers, auth and timeout.
//
// A Group speaks one protocol era: that of its oldest server. When any
// server only speaks the initialize handshake, the others are connected at
// the handshake era too, so features gated to 2026-07-28 are off for the
// whole group. Keep such a server in its own Adapter to let the rest stay
// on the newer protocol.
type Group struct {
	clients []*Client
	filters map[*Client]toolFilter

	mu     sync.Mutex
	pulled string // the server that pulled the group to the handshake era
}

// toolFilter keeps or drops a server's tools by their server-side names.
type toolFilter struct {
	include, exclude []string
}

func (f toolFilter) keep(name string) bool {
	if len(f.include) > 0 && !slices.Contains(f.include, name) {
		return false
	}
	return !slices.Contains(f.exclude, name)
}

// NewGroup returns a Group for the servers of cfg. Every server gets a
// Client with opts, overridden by what its entry sets: name, transport,
// headers, auth and timeout. An *OAuth in opts.Auth is the template for
// the servers whose entry says "auth": "oauth" (each gets its own tokens);
// servers without auth get none. opts may be nil. NewGroup does not
// connect.
func NewGroup(cfg *Config, options *ClientOptions) (*Group, error) {
	var opts ClientOptions
	if options != nil {
		opts = *options
	}
	if cfg == nil || len(cfg.Servers) == 0 {
		return nil, &TargetError{Target: "config", Reason: "it has no servers"}
	}
	if err := checkSharedCredentials(cfg, opts); err != nil {
		return nil, err
	}
	if err := opts.Cache.validate(); err != nil {
		return nil, fmt.Errorf("ClientOptions.Cache: %w", err)
	}
	if opts.MaxConcurrentCalls < 0 {
		return nil, fmt.Errorf("ClientOptions.MaxConcurrentCalls is %d: want 0 (no cap) or more", opts.MaxConcurrentCalls)
	}
	g := &Group{filters: make(map[*Client]toolFilter)}
	var errs []error
	for _, sc := range cfg.Servers {
		c, err := clientForServer(sc, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.clients = append(g.clients, c)
		g.filters[c] = toolFilter{include: sc.IncludeTools, exclude: sc.ExcludeTools}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return g, nil
}

// clientForServer builds the Client for one server of a config.
func clientForServer(sc *ServerConfig, base ClientOptions) (*Client, error) {
	opts, err := serverOptions(sc, base)
	if err != nil {
		return nil, err
	}
	shape, err := configShape(sc)
	if err != nil {
		return nil, err
	}
	ep, err := serverEndpoint(sc, base, &opts)
	if err != nil {
		return nil, err
	}
	if ep.Local() {
		opts.Headers, opts.Auth, opts.HTTPClient, opts.OAuthHandler = nil, nil, nil, nil
	}
	c := newClient(ep, opts)
	c.shape = shape
	return c, nil
}

// checkSharedCredentials refuses one bearer token or OAuth handler for
// several HTTP servers: a credential is for the server that issued it.
// (An AuthFunc sees each request and may choose; an *OAuth is a template
// that gives every "auth": "oauth" server its own tokens.)
func checkSharedCredentials(cfg *Config, opts ClientOptions) error {
	_, bearer := opts.Auth.(bearerAuth)
	header := httplayer.HasAuthorization(opts.Headers)
	if !bearer && !header && opts.OAuthHandler == nil {
		return nil
	}
	var shared []string
	for _, sc := range cfg.Servers {
		own := sc.Auth != nil || httplayer.HasAuthorization(sc.Headers)
		if sc.Transport != "stdio" && (!own || opts.OAuthHandler != nil) {
			shared = append(shared, sc.Name)
		}
	}
	if len(shared) < 2 {
		return nil
	}
	what := "ClientOptions.Auth (a bearer token)"
	switch {
	case opts.OAuthHandler != nil:
		what = "ClientOptions.OAuthHandler"
	case !bearer:
		what = "the Authorization header in ClientOptions.Headers"
	}
	return &TargetError{Target: "config", Reason: fmt.Sprintf("%s would send one credential to %d servers (%s); give each server its own \"auth\" in the config", what, len(shared), strings.Join(shared, ", "))}
}

// oauthFor returns the OAuth of one config server: the settings of its
// "auth" object over a copy of the *OAuth in ClientOptions.Auth (which
// gives OpenURL, Store and the rest), or a zero OAuth. A preregistered
// client (ClientID, ClientSecret, Issuer) belongs to one authorization
// server, so it is never taken from the template: only the server's own
// "auth" object gives one.
func oauthFor(base Auth, set *OAuthSettings) *OAuth {
	o := &OAuth{}
	if b, ok := base.(*OAuth); ok && b != nil {
		*o = *b
	}
	o.ClientID, o.ClientSecret, o.Issuer = "", "", ""
	if set != nil {
		if set.ClientID != "" {
			o.ClientID, o.ClientSecret, o.Issuer = set.ClientID, set.ClientSecret, set.Issuer
		}
		if len(set.Scopes) > 0 {
			o.Scopes = set.Scopes
		}
		if set.RedirectURL != "" {
			o.RedirectURL = set.RedirectURL
		}
	}
	return o
}

// Clients returns the group's clients, in config order.
func (g *Group) Clients() []*Client { return slices.Clone(g.clients) }

// Client returns the client of the named server, or nil.
func (g *Group) Client(name string) *Client {
	for _, c := range g.clients {
		if c.nameNow() == name {
			return c
		}
	}
	return nil
}

// ServerFailure is one server that could not be used.
type ServerFailure struct {
	Server string
	Err    error

	client *Client // the server's client, when the group knows it
}

// GroupError lists every server of a group that failed, not just the first.
type GroupError struct {
	Failures []ServerFailure
}

func (e *GroupError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpadapter: %d of the servers failed:", len(e.Failures))
	for _, f := range e.Failures {
		fmt.Fprintf(&b, "\n  %s: %v", f.Server, strings.ReplaceAll(f.Err.Error(), "\n", "\n    "))
	}
	return b.String()
}

// Unwrap returns the servers' errors.
func (e *GroupError) Unwrap() []error {
	errs := make([]error, len(e.Failures))
	for i, f := range e.Failures {
		errs[i] = f.Err
	}
	return errs
}

// fanOut runs fn for every client at once and collects the failures.
func (g *Group) fanOut(ctx context.Context, fn func(context.Context, int, *Client) error) []ServerFailure {
	errs := make([]error, len(g.clients))
	var wg sync.WaitGroup
	for i, c := range g.clients {
		wg.Go(func() { errs[i] = fn(ctx, i, c) })
	}
	wg.Wait()
	var failures []ServerFailure
	for i, err := range errs {
		if err != nil {
			failures = append(failures, ServerFailure{Server: g.clients[i].nameNow(), Err: err, client: g.clients[i]})
		}
	}
	return failures
}

// connect connects every server at once and applies the era rule.
func (g *Group) connect(ctx context.Context) []ServerFailure {
	infos := make([]*ServerInfo, len(g.clients))
	failures := g.fanOut(ctx, func(ctx context.Context, i int, c *Client) error {
		var err error
		infos[i], err = c.Connect(ctx)
		return err
	})
	failures = append(failures, g.sameNames()...)
	// The oldest backend sets the era.
	legacy := ""
	for i, info := range infos {
		if info != nil && info.Era == EraHandshake && g.clients[i].pinned() == "" {
			legacy = g.clients[i].nameNow()
			break
		}
	}
	if legacy == "" {
		return failures
	}
	g.mu.Lock()
	if g.pulled == "" {
		g.pulled = legacy
	}
	g.mu.Unlock()
	var redo []*Client
	for i, info := range infos {
		c := g.clients[i]
		if c.pinned() == "" {
			c.pin(wire.HandshakeVersion)
			if info != nil && info.Era == EraDiscover {
				redo = append(redo, c)
			}
		}
	}
	for _, c := range redo {
		c.retire() // the next request reconnects at the handshake era
	}
	return failures
}

// sameNames returns a failure for each client whose name, settled by
// its server when it connected (ClientOptions.NameFromServer), is
// another's: each names both. A client whose name was given does not
// fail when a server names itself so: that server does.
func (g *Group) sameNames() []ServerFailure {
	var failures []ServerFailure
	for i, c := range g.clients {
		for j, o := range g.clients {
			if i == j || c.opts.naming == nil || c.nameNow() != o.nameNow() {
				continue
			}
			failures = append(failures, ServerFailure{Server: c.nameNow(), client: c, Err: &TargetError{
				Target: fmt.Sprintf("group server %q (%s)", c.nameNow(), c.ep.Describe()),
				Reason: fmt.Sprintf("server %s has the same name; a name prefixes its server's tools, so set ClientOptions.Name on one of them", o.ep.Describe()),
			}})
			break
		}
	}
	return failures
}

// Info connects every server and describes the group.
func (g *Group) Info(ctx context.Context) (*Info, error) {
	failures := g.connect(ctx)
	info := &Info{}
	for _, c := range g.clients {
		if c.failedIn(failures) {
			continue
		}
		si, err := c.Connect(ctx)
		if err != nil {
			failures = append(failures, ServerFailure{Server: c.name, Err: err})
			continue
		}
		info.Servers = append(info.Servers, *si)
		if info.Era == EraUnknown || si.Era < info.Era {
			info.Era = si.Era
		}
	}
	g.mu.Lock()
	info.PulledDownBy = g.pulled
	g.mu.Unlock()
	info.Unavailable = failures
	if len(info.Servers) == 0 {
		return nil, &GroupError{Failures: failures}
	}
	return info, nil
}

func (c *Client) failedIn(failures []ServerFailure) bool {
	return slices.ContainsFunc(failures, func(f ServerFailure) bool {
		return f.client == c || f.client == nil && f.Server == c.nameNow()
	})
}

// tools lists the tools of every server at once and runs prepare on each
// server's list (Adapter.prepare: filters, transforms). It returns the
// tools of the servers that answered and the failures of those that did
// not, or whose prepare failed.
func (g *Group) tools(ctx context.Context, prepare func(*Client, []*Tool) ([]*Tool, error)) ([]*Tool, []ServerFailure) {
	failures := g.connect(ctx)
	lists := make([][]*Tool, len(g.clients))
	more := g.fanOut(ctx, func(ctx context.Context, i int, c *Client) error {
		if c.failedIn(failures) {
			return nil
		}
		ts, err := c.Tools(ctx)
		if err != nil {
			return err
		}
		lists[i], err = prepare(c, ts)
		return err
	})
	failures = append(failures, more...)
	var all []*Tool
	for _, l := range lists {
		all = append(all, l...)
	}
	return all, failures
}

// Close ends the connections of every server, all at once.
func (g *Group) Close() error {
	failures := g.fanOut(context.Background(), func(_ context.Context, _ int, c *Client) error { return c.Close() })
	if len(failures) == 0 {
		return nil
	}
	return &GroupError{Failures: failures}
}

// GroupOf returns a Group of clients built with NewClient, for servers a
// Config cannot describe (in-process servers, custom HTTP clients). Their
// names (ClientOptions.Name) must be distinct and match ^[A-Za-z0-9_-]+$,
// since they prefix the tool names.
func GroupOf(clients ...*Client) (*Group, error) {
	if len(clients) == 0 {
		return nil, &TargetError{Target: "group", Reason: "no clients"}
	}
	seen := make(map[string]bool)
	for _, c := range clients {
		if c == nil {
			return nil, &TargetError{Target: "group", Reason: "a nil *Client"}
		}
		if !c.nameSettled() {
			continue // named by its server when it connects (Group.sameNames)
		}
		if !config.ValidServerName(c.name) {
			return nil, &TargetError{Target: fmt.Sprintf("group server %q", c.name), Reason: "a server name prefixes its tools' names, so it must match ^[A-Za-z0-9_-]{1,64}$; set ClientOptions.Name"}
		}
		if seen[c.name] {
			return nil, &TargetError{Target: fmt.Sprintf("group server %q", c.name), Reason: "two servers have this name"}
		}
		seen[c.name] = true
	}
	return &Group{clients: slices.Clone(clients), filters: make(map[*Client]toolFilter)}, nil
}

// cloneForInterrupt returns a group of clones of g's clients in
// ElicitInterrupt mode, with the same filters.
func (g *Group) cloneForInterrupt(parkTimeout time.Duration) *Group {
	out := &Group{filters: make(map[*Client]toolFilter, len(g.clients)), pulled: g.pulled}
	for _, c := range g.clients {
		clone := c.cloneForInterrupt(parkTimeout)
		out.clients = append(out.clients, clone)
		out.filters[clone] = g.filters[c]
	}
	return out
}
