package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

// serveLimitFlags set the gateway's limits (gateway.Limits) and the store
// replicas share them, and DPoP proofs, in.
type serveLimitFlags struct {
	rules     []string
	storeEnv  string
	failOpen  bool
	leaseTTL  time.Duration
	storeWait time.Duration
	tasks     gateway.TaskStore // the store's, set by open
}

func (f *serveLimitFlags) register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.rules, "limit", nil, "a rate limit or concurrency cap on tool calls: comma-separated `k=v` pairs of name, principal, server, tool (patterns), per (principal+server+tool), rate (N/DURATION), burst, concurrent (repeatable; docs/gateway.md)")
	fl.StringVar(&f.storeEnv, "store-env", "", "the environment `variable` holding a redis:// or postgres:// URL: replicas share --limit counters, DPoP proofs, handshake-era client sessions and tasks there, so that any replica serves any request (default: in memory, this process only)")
	fl.BoolVar(&f.failOpen, "limits-fail-open", false, "let calls through unlimited while the store fails (default: refuse them)")
	fl.DurationVar(&f.leaseTTL, "limit-lease-ttl", 0, fmt.Sprintf("how long a dead replica's call keeps its concurrency slot (default %s)", gateway.DefaultLeaseTTL))
	fl.DurationVar(&f.storeWait, "store-timeout", 0, fmt.Sprintf("bound each store operation (default %s)", gateway.DefaultLimitStoreTimeout))
}

// open returns the limits, the replay store (nil: the Guard's own), the
// shared sessions (nil: none) and what closes the store's connections.
func (f *serveLimitFlags) open(ctx context.Context, logger *slog.Logger) (*gateway.Limits, resourceserver.ReplayStore, *gateway.SessionOptions, func(), error) {
	var rules []gateway.LimitRule
	for _, s := range f.rules {
		r, err := gateway.ParseLimitRule(s)
		if err != nil {
			return nil, nil, nil, nil, cmdline.Usagef("--limit %q: %v", s, err)
		}
		rules = append(rules, r)
	}
	if f.storeEnv == "" {
		if len(rules) == 0 {
			return nil, nil, nil, func() {}, nil
		}
		return &gateway.Limits{Rules: rules, FailOpen: f.failOpen, LeaseTTL: f.leaseTTL, StoreTimeout: f.storeWait}, nil, nil, func() {}, nil
	}
	raw, ok := os.LookupEnv(f.storeEnv)
	if !ok || raw == "" {
		return nil, nil, nil, nil, cmdline.Usagef("--store-env %s: the variable is not set", f.storeEnv)
	}
	store, sessions, tasks, closeFn, err := openStore(ctx, raw, logger)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("--store-env %s: %w", f.storeEnv, err)
	}
	var l *gateway.Limits
	if len(rules) > 0 {
		l = &gateway.Limits{Rules: rules, Store: store, FailOpen: f.failOpen, LeaseTTL: f.leaseTTL, StoreTimeout: f.storeWait}
	}
	f.tasks = tasks
	return l, store, &gateway.SessionOptions{Store: sessions, StoreTimeout: f.storeWait}, closeFn, nil
}

// sharedStore is what the redisstore and pgstore LimitStores are.
type sharedStore interface {
	gateway.LimitStore
	resourceserver.ReplayStore
}

// openStore connects to the Redis or PostgreSQL server of raw: its limit,
// session and task stores.
func openStore(ctx context.Context, raw string, logger *slog.Logger) (sharedStore, gateway.SessionStore, gateway.TaskStore, func(), error) {
	scheme, _, _ := strings.Cut(raw, "://")
	switch scheme {
	case "redis", "rediss":
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("not a Redis URL (%v)", redactErr(err, raw))
		}
		rdb := redis.NewClient(o)
		ro := &redisstore.Options{Logger: logger}
		return redisstore.NewLimitStore(rdb, ro), redisstore.NewSessionStore(rdb, ro), redisstore.NewTaskStore(rdb, ro), func() { _ = rdb.Close() }, nil
	case "postgres", "postgresql":
		pool, err := pgxpool.New(ctx, raw)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("not a PostgreSQL URL (%v)", redactErr(err, raw))
		}
		po := &pgstore.Options{Logger: logger}
		s, err := pgstore.NewLimitStore(ctx, pool, po)
		if err != nil {
			pool.Close()
			return nil, nil, nil, nil, err
		}
		ss, err := pgstore.NewSessionStore(ctx, pool, po)
		if err != nil {
			pool.Close()
			return nil, nil, nil, nil, err
		}
		ts, err := pgstore.NewTaskStore(ctx, pool, po)
		if err != nil {
			pool.Close()
			return nil, nil, nil, nil, err
		}
		return s, ss, ts, pool.Close, nil
	}
	return nil, nil, nil, nil, fmt.Errorf("want a redis://, rediss://, postgres:// or postgresql:// URL, not %q://", scheme)
}

// redactErr is err's text without raw (a URL that may hold a password).
func redactErr(err error, raw string) string {
	return strings.ReplaceAll(err.Error(), raw, "(the URL)")
}

// describeLimits prints the limits and where they are kept.
func (f *serveLimitFlags) describe(w io.Writer, l *gateway.Limits) {
	if l == nil {
		return
	}
	where := "in memory (this process only)"
	if f.storeEnv != "" {
		where = "in the store of $" + f.storeEnv
	}
	mode := "refused"
	if f.failOpen {
		mode = "let through"
	}
	fmt.Fprintf(w, "mcpadapter serve: %d limit(s) on tool calls, kept %s; while the store fails, calls are %s\n", len(l.Rules), where, mode)
}

// apply sets opts.Limits and the Guard's replay store from the flags and
// returns what closes the store's connections.
func (f *serveLimitFlags) apply(ctx context.Context, opts *gateway.Options, auth *serveAuthFlags, out io.Writer, logger *slog.Logger) (func(), error) {
	l, replay, sessions, closeFn, err := f.open(ctx, logger)
	if err != nil {
		return nil, err
	}
	opts.Limits, auth.replay, opts.Sessions = l, replay, sessions
	if f.tasks != nil {
		to := &gateway.TaskOptions{}
		if opts.Tasks != nil {
			*to = *opts.Tasks
		}
		to.Store, to.StoreTimeout = f.tasks, f.storeWait
		opts.Tasks = to
	}
	f.describe(out, l)
	if sessions != nil {
		fmt.Fprintf(out, "mcpadapter serve: handshake-era client sessions and tasks are shared in the store of $%s: any replica serves any request\n", f.storeEnv)
	}
	return closeFn, nil
}
