package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
)

// sweepBatch and sweepMaxBatches bound one sweep: at most this many
// batches of this many rows, so a sweep never holds the table long.
const (
	sweepBatch      = 1000
	sweepMaxBatches = 100
)

// CacheStore is an mcpadapter.CacheStore in PostgreSQL: give it to
// mcpadapter.CacheConfig.Store of every replica, and a "public" result
// one replica fetched is a hit in the others. A row past its expires_at
// is never returned; a sweeper goroutine, which Close stops, deletes such
// rows every Options.SweepInterval (only rows expired when it deletes
// them: a row a Set is renewing is skipped). Errors (the database
// unreachable, or slower than Options.CacheTimeout) are logged and the
// cache misses: a call goes to the server instead. Keys longer than 1 KiB
// are stored as their first 1000 bytes and a SHA-256 of the whole key.
type CacheStore struct {
	pool                            *pgxpool.Pool
	get, set, del, delPrefix, sweep string
	log                             *slog.Logger
	where                           string
	timeout                         time.Duration // one Get, Set or Delete
	long                            time.Duration // one DeletePrefix or sweep batch

	stop context.CancelFunc
	done chan struct{}
	once sync.Once
}

var _ mcpadapter.CacheStore = (*CacheStore)(nil)

// NewCacheStore checks that the cache table is there (creating it only
// if it is missing), and returns a CacheStore on it with its sweeper
// running. Close stops the sweeper.
func NewCacheStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*CacheStore, error) {
	if err := ensure(ctx, pool, opts, opts.timeout(), "cache"); err != nil {
		return nil, err
	}
	t := opts.table("cache")
	s := &CacheStore{
		pool:      pool,
		get:       `SELECT value, expires_at FROM ` + t + ` WHERE key = $1 AND expires_at > now()`,
		set:       `INSERT INTO ` + t + ` (key, value, expires_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
		del:       `DELETE FROM ` + t + ` WHERE key = $1`,
		delPrefix: `DELETE FROM ` + t + ` WHERE key >= $1 AND ($2::bytea IS NULL OR key < $2)`,
		// Rows a Set holds are skipped (SKIP LOCKED), and the expiry is
		// checked again on the row as it is when deleted: a row renewed
		// meanwhile stays.
		sweep: `DELETE FROM ` + t + ` WHERE key IN (SELECT key FROM ` + t + ` WHERE expires_at <= now() LIMIT ` +
			fmt.Sprint(sweepBatch) + ` FOR UPDATE SKIP LOCKED) AND expires_at <= now()`,
		log:     opts.logger(),
		where:   where(pool),
		timeout: opts.cacheTimeout(),
		long:    opts.timeout(),
		done:    make(chan struct{}),
	}
	interval := time.Minute
	if opts != nil && opts.SweepInterval > 0 {
		interval = opts.SweepInterval
	}
	sctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go s.sweeper(sctx, interval)
	return s, nil
}

// Close stops the sweeper and waits for it. It does not close the pool.
func (s *CacheStore) Close() error {
	s.once.Do(func() { s.stop() })
	<-s.done
	return nil
}

// sweeper deletes expired rows every interval until ctx ends.
func (s *CacheStore) sweeper(ctx context.Context, interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "pgstore: cache sweep failed", "store", s.where, "err", err)
		}
	}
}

// Sweep deletes expired rows now, at most 100 batches of 1000 (each
// bounded by Options.Timeout), and returns how many it deleted. The
// sweeper calls it; call it to sweep at another time.
func (s *CacheStore) Sweep(ctx context.Context) (int64, error) {
	var total int64
	for range sweepMaxBatches {
		bctx, cancel := context.WithTimeout(ctx, s.long)
		n, err := exec(bctx, s.pool, s.sweep)
		cancel()
		if err != nil {
			return total, fmt.Errorf("pgstore: sweeping the cache at %s: %w", s.where, err)
		}
		total += n
		if n < sweepBatch {
			break
		}
	}
	return total, nil
}

// Get returns the entry stored under key, if any and not expired.
func (s *CacheStore) Get(ctx context.Context, key string) (mcpadapter.CacheEntry, bool) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var e mcpadapter.CacheEntry
	err := s.pool.QueryRow(ctx, s.get, fitBytes([]byte(key))).Scan(&e.Value, &e.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return mcpadapter.CacheEntry{}, false
	}
	if err != nil {
		s.log.WarnContext(ctx, "pgstore: cache read failed; calling the server", "store", s.where, "err", err)
		return mcpadapter.CacheEntry{}, false
	}
	return e, true
}

// Set stores e under key until e.Expires. An entry already expired is
// not stored.
func (s *CacheStore) Set(ctx context.Context, key string, e mcpadapter.CacheEntry) {
	if !time.Now().Before(e.Expires) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := exec(ctx, s.pool, s.set, fitBytes([]byte(key)), e.Value, e.Expires); err != nil {
		s.log.WarnContext(ctx, "pgstore: cache write failed", "store", s.where, "err", err)
	}
}

// Delete removes the entry stored under key, if any.
func (s *CacheStore) Delete(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := exec(ctx, s.pool, s.del, fitBytes([]byte(key))); err != nil {
		s.log.WarnContext(ctx, "pgstore: cache delete failed", "store", s.where, "err", err)
	}
}

// DeletePrefix removes every entry whose key starts with prefix: the keys
// from prefix up to the first key after all of prefix's (an index range),
// bounded by Options.Timeout. A prefix longer than 1000 bytes is cut to
// its first 1000 (long keys are stored so), which may remove more
// entries than asked: a cache may always miss.
func (s *CacheStore) DeletePrefix(ctx context.Context, prefix string) {
	ctx, cancel := context.WithTimeout(ctx, s.long)
	defer cancel()
	p := []byte(prefix)
	if len(p) > keepKey {
		p = p[:keepKey]
	}
	if _, err := exec(ctx, s.pool, s.delPrefix, p, prefixEnd(p)); err != nil {
		s.log.ErrorContext(ctx, "pgstore: cache invalidation failed", "store", s.where, "prefix", prefix, "err", err)
	}
}

// prefixEnd returns the least byte string greater than every string that
// starts with p, or nil if there is none (p is all 0xff bytes).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
