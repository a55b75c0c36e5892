package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationLock is the advisory lock key Migrate holds: the first 8 bytes
// of "mcpadap" as a number, so that replicas starting at once create the
// tables once.
const migrationLock = 0x6d63706164617074

// Migrate creates the tables and indexes of every store (those missing),
// in one transaction under an advisory lock, so that replicas starting at
// once do not race. Run it as a deployment step, as a role that may
// create tables in the schema; the stores can then run as a role with
// only SELECT, INSERT, UPDATE and DELETE on the tables (and USAGE on the
// schema): their constructors run no DDL when the tables are there.
func Migrate(ctx context.Context, pool *pgxpool.Pool, opts *Options) error {
	return migrate(ctx, pool, opts, "checkpoints", "cache", "tokens", "token_locks", "limit_rates", "limit_leases", "limit_once", "sessions", "session_claims", "tasks")
}

// ddl returns the statements that create the table name.
func ddl(opts *Options, name string) []string {
	t := opts.table(name)
	switch name {
	case "checkpoints":
		return []string{
			`CREATE TABLE IF NOT EXISTS ` + t + ` (id text PRIMARY KEY, data bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
			`CREATE INDEX IF NOT EXISTS ` + opts.indexName("checkpoints_updated_at") + ` ON ` + t + ` (updated_at)`,
		}
	case "cache":
		return []string{
			`CREATE TABLE IF NOT EXISTS ` + t + ` (key bytea PRIMARY KEY, value bytea NOT NULL, expires_at timestamptz NOT NULL)`,
			`CREATE INDEX IF NOT EXISTS ` + opts.indexName("cache_expires_at") + ` ON ` + t + ` (expires_at)`,
		}
	case "tokens":
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (key text PRIMARY KEY, data bytea NOT NULL, version bigint NOT NULL DEFAULT 1, updated_at timestamptz NOT NULL DEFAULT now())`}
	case "token_locks":
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (key text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)`}
	case "limit_rates":
		// tat: when the next request is due, in microseconds since 1970.
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (key text PRIMARY KEY, tat bigint NOT NULL)`}
	case "limit_leases":
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (key text NOT NULL, lease text NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (key, lease))`}
	case "limit_once":
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (bucket text NOT NULL, id text NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (bucket, id))`}
	case "sessions", "session_claims", "tasks":
		// expires_at: in microseconds since 1970, by the database's clock.
		return []string{`CREATE TABLE IF NOT EXISTS ` + t + ` (id text PRIMARY KEY, data bytea NOT NULL, expires_at bigint NOT NULL)`}
	}
	return nil
}

// columns lists the columns of each table the stores use: a table that
// has them is taken as it is.
var columns = map[string]string{
	"checkpoints":    "id, data, updated_at",
	"cache":          "key, value, expires_at",
	"tokens":         "key, data, version, updated_at",
	"token_locks":    "key, owner, expires_at",
	"limit_rates":    "key, tat",
	"limit_leases":   "key, lease, expires_at",
	"limit_once":     "bucket, id, expires_at",
	"sessions":       "id, data, expires_at",
	"session_claims": "id, data, expires_at",
	"tasks":          "id, data, expires_at",
}

func migrate(ctx context.Context, pool *pgxpool.Pool, opts *Options, tables ...string) error {
	err := readCommitted(ctx, pool, func(tx pgx.Tx) error {
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

// ensure checks that the tables a store uses are there, with their
// columns, by reading none of their rows; it creates them (Migrate's DDL)
// only when one is missing. A role that may not create them gets an error
// saying to run Migrate.
func ensure(ctx context.Context, pool *pgxpool.Pool, opts *Options, timeout time.Duration, tables ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var missing []string
	for _, name := range tables {
		_, err := pool.Exec(ctx, `SELECT `+columns[name]+` FROM `+opts.table(name)+` WHERE false`)
		var pe *pgconn.PgError
		switch {
		case err == nil:
		case errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "42703"): // undefined table, column
			missing = append(missing, name)
		default:
			return fmt.Errorf("pgstore: checking the table %s at %s: %w", opts.table(name), where(pool), err)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := migrate(ctx, pool, opts, missing...); err != nil {
		return fmt.Errorf("%w (run pgstore.Migrate as the tables' owner, as a deployment step)", err)
	}
	return nil
}
