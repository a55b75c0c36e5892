package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTablePrefix starts every table name when Options.TablePrefix is
// empty.
const DefaultTablePrefix = "mcpadapter_"

// Defaults of Options.
const (
	// DefaultTimeout bounds one operation of a checkpoint or token store.
	DefaultTimeout = 5 * time.Second
	// DefaultCacheTimeout bounds one CacheStore operation: a cache that
	// cannot answer sooner misses.
	DefaultCacheTimeout = time.Second
	// DefaultCheckpointTTL is how long a checkpoint lives after its last
	// write.
	DefaultCheckpointTTL = 7 * 24 * time.Hour
)

// Options configures a store. A nil *Options means the defaults.
type Options struct {
	// TablePrefix starts every table name; empty means DefaultTablePrefix.
	// It may name a schema too ("agents.mcp_"): the part before the dot.
	TablePrefix string
	// Logger receives the errors of CacheStore, whose methods return none
	// (a cache that cannot reach the database misses), and of the
	// sweeps; nil means slog.Default().
	Logger *slog.Logger
	// SweepInterval is how often CacheStore deletes expired rows; zero
	// means one minute.
	SweepInterval time.Duration
	// Timeout bounds each operation of a CheckpointStore or TokenStore
	// (waiting for a pooled connection included); zero means
	// DefaultTimeout. The error names the store and its address.
	Timeout time.Duration
	// CacheTimeout bounds each CacheStore operation; zero means
	// DefaultCacheTimeout. A read that takes longer is a miss.
	CacheTimeout time.Duration
	// CheckpointTTL is how long a checkpoint lives after its last write:
	// an older one is not returned, and is deleted by the next sweep
	// (CheckpointStore.Sweep, which Set runs at most once an hour). Zero
	// means DefaultCheckpointTTL; a negative value keeps checkpoints
	// until deleted.
	CheckpointTTL time.Duration
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

func (o *Options) timeout() time.Duration {
	if o == nil || o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

func (o *Options) cacheTimeout() time.Duration {
	if o == nil || o.CacheTimeout <= 0 {
		return DefaultCacheTimeout
	}
	return o.CacheTimeout
}

func (o *Options) checkpointTTL() time.Duration {
	switch {
	case o == nil || o.CheckpointTTL == 0:
		return DefaultCheckpointTTL
	case o.CheckpointTTL < 0:
		return 0
	}
	return o.CheckpointTTL
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

// where names the database of pool for error messages (no password).
func where(pool *pgxpool.Pool) string {
	c := pool.Config().ConnConfig
	return fmt.Sprintf("postgres %s:%d/%s", c.Host, c.Port, c.Database)
}

// readCommitted runs fn in a READ COMMITTED transaction, whatever the
// database's default_transaction_isolation: the statements here rely on
// it (a row changed by another transaction is read again, not a
// serialization failure).
func readCommitted(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn)
}

// exec runs one statement in a READ COMMITTED transaction and returns the
// rows it changed.
func exec(ctx context.Context, pool *pgxpool.Pool, sql string, args ...any) (int64, error) {
	var n int64
	err := readCommitted(ctx, pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// execAgain is exec for statements that may run twice (each a no-op the
// second time): it runs one again, up to three times in all while ctx
// lasts, when it failed on its connection (closed, reset, or terminated
// by the server) rather than on its own.
func execAgain(ctx context.Context, pool *pgxpool.Pool, sql string, args ...any) (int64, error) {
	var n int64
	var err error
	for range 3 {
		if n, err = exec(ctx, pool, sql, args...); err == nil || !connectionError(err) || ctx.Err() != nil {
			return n, err
		}
	}
	return n, err
}

// connectionError reports whether err is a failure of the connection:
// not an error the server gave the statement, or one that ends the
// session (class 08, connection exception; 57P01, terminated by an
// administrator; 57P02/57P03, crash or startup).
func connectionError(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, pgx.ErrNoRows)
	}
	return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
}

// Keys longer than maxKey bytes are stored as their first keepKey bytes
// (cut on a character boundary for text keys) and the SHA-256 of the
// whole key: a B-tree index entry holds at most about 2.7 KB. A stored
// long key is always longer than maxKey, so it never equals a short one,
// and it starts with the key's first keepKey bytes, so a prefix of up to
// keepKey bytes still selects it.
const (
	maxKey  = 1024
	keepKey = 1000
)

// fitKey is a text key as stored.
func fitKey(k string) string {
	if len(k) <= maxKey {
		return k
	}
	// At most utf8.UTFMax-1 bytes back: a key that is not UTF-8 is cut
	// anywhere, and the stored key stays longer than maxKey.
	cut := keepKey
	for cut > keepKey-utf8.UTFMax+1 && !utf8.RuneStart(k[cut]) {
		cut--
	}
	sum := sha256.Sum256([]byte(k))
	return k[:cut] + "#sha256:" + hex.EncodeToString(sum[:])
}

// fitBytes is a bytea key as stored.
func fitBytes(k []byte) []byte {
	if len(k) <= maxKey {
		return k
	}
	sum := sha256.Sum256(k)
	return append(append([]byte(nil), k[:keepKey]...), sum[:]...)
}
