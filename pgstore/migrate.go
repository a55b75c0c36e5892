package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTablePrefix starts every table name when Options.TablePrefix is
// empty.
const DefaultTablePrefix = "mcpadapter_"

// Options configures a store. A nil *Options means the defaults.
type Options struct {
	// TablePrefix starts every table name; empty means DefaultTablePrefix.
	// It may name a schema too ("agents.mcp_"): the part before the dot.
	TablePrefix string
	// Logger receives the errors of CacheStore, whose methods return none
	// (a cache that cannot reach the database misses); nil means
	// slog.Default().
	Logger *slog.Logger
	// SweepInterval is how often CacheStore deletes expired rows; zero
	// means one minute.
	SweepInterval time.Duration
}

func (o *Options) prefix() string {
	if o == nil || o.TablePrefix == "" {
		return DefaultTablePrefix
	}
	return o.TablePrefix
}

func (o *Options) logger() *slog.Logger {
	if o == nil || o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// table returns the quoted name of the table name, after the prefix.
func (o *Options) table(name string) string {
	p := o.prefix()
	if schema, rest, ok := strings.Cut(p, "."); ok {
		return pgx.Identifier{schema, rest + name}.Sanitize()
	}
	return pgx.Identifier{p + name}.Sanitize()
}

// indexName returns the quoted name of the index name: the prefix without
// its schema (an index lives in its table's schema).
func (o *Options) indexName(name string) string {
	p := o.prefix()
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		p = p[i+1:]
	}
	return pgx.Identifier{p + name}.Sanitize()
}

// migrationLock is the advisory lock key Migrate holds: the first 8 bytes
// of "mcpadap" as a number, so that replicas starting at once create the
// tables once.
const migrationLock = 0x6d63706164617074

// Migrate creates the tables of every store (if missing) under an
// advisory lock, so that replicas starting at once do not race. The
// stores' constructors create their own tables the same way; call Migrate
// to do it ahead, as a deployment step.
func Migrate(ctx context.Context, pool *pgxpool.Pool, opts *Options) error {
	return migrate(ctx, pool, opts, "checkpoints", "cache", "tokens")
}

// ddl returns the statements that create the table name.
func ddl(opts *Options, name string) []string {
	t := opts.table(name)
	switch name {
	case "checkpoints":
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (id text PRIMARY KEY, data bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`}
	case "cache":
		return []string{
			`CREATE TABLE IF NOT EXISTS ` + t + ` (key bytea PRIMARY KEY, value bytea NOT NULL, expires_at timestamptz NOT NULL)`,
			`CREATE INDEX IF NOT EXISTS ` + opts.indexName("cache_expires_at") + ` ON ` + t + ` (expires_at)`,
		}
	case "tokens":
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (key text PRIMARY KEY, data bytea NOT NULL, version bigint NOT NULL DEFAULT 1, updated_at timestamptz NOT NULL DEFAULT now())`}
	}
	return nil
}

func migrate(ctx context.Context, pool *pgxpool.Pool, opts *Options, tables ...string) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		for _, name := range tables {
			for _, stmt := range ddl(opts, name) {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("%s: %w", stmt, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgstore: creating the tables at %s: %w", where(pool), err)
	}
	return nil
}

// where names the database of pool for error messages (no password).
func where(pool *pgxpool.Pool) string {
	c := pool.Config().ConnConfig
	return fmt.Sprintf("postgres %s:%d/%s", c.Host, c.Port, c.Database)
}
