package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// nowUS is the database's clock in microseconds: every replica counts with
// the same clock, whatever its own.
const nowUS = `(extract(epoch FROM clock_timestamp()) * 1000000)::bigint`

// limitSweepEvery is how often a LimitStore deletes the rows that ran out
// (during one of its operations).
const limitSweepEvery = time.Minute

// LimitStore keeps the counters of rate limits, the leases of concurrency
// caps and the ids of requests that may be used once (DPoP proofs) in
// PostgreSQL, for replicas that share them: it is a gateway.LimitStore and
// a resourceserver.ReplayStore. A rate limit is one INSERT ... ON
// CONFLICT statement (atomic on its row); a lease is taken in a
// transaction holding an advisory lock on its cap; all use the database's
// clock.
type LimitStore struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	where   string

	take, wait, lock, expire, lease, first, renew, release, once, seen string
	sweeps                                                             []string
	lastSweep                                                          atomic.Int64
}

// NewLimitStore checks the store's tables on pool (creating those missing,
// as Migrate does) and returns a LimitStore on them. Options.Timeout
// bounds each operation.
func NewLimitStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*LimitStore, error) {
	if err := ensure(ctx, pool, opts, opts.timeout(), "limit_rates", "limit_leases", "limit_once"); err != nil {
		return nil, err
	}
	r, l, o := opts.table("limit_rates"), opts.table("limit_leases"), opts.table("limit_once")
	s := &LimitStore{pool: pool, timeout: opts.timeout(), where: where(pool)}
	s.take = `INSERT INTO ` + r + ` AS r (key, tat) VALUES ($1, ` + nowUS + ` + $2::bigint)
		ON CONFLICT (key) DO UPDATE SET tat = greatest(r.tat, ` + nowUS + `) + $2::bigint
		WHERE greatest(r.tat, ` + nowUS + `) + $2::bigint - $3::bigint * $2::bigint <= ` + nowUS + `
		RETURNING 0`
	s.wait = `SELECT greatest(tat, ` + nowUS + `) + $2::bigint - $3::bigint * $2::bigint - ` + nowUS + ` FROM ` + r + ` WHERE key = $1`
	s.lock = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`
	s.expire = `DELETE FROM ` + l + ` WHERE key = $1 AND expires_at <= ` + nowUS
	s.lease = `INSERT INTO ` + l + ` (key, lease, expires_at) SELECT $1, $2, ` + nowUS + ` + $4::bigint
		WHERE EXISTS (SELECT 1 FROM ` + l + ` WHERE key = $1 AND lease = $2) OR (SELECT count(*) FROM ` + l + ` WHERE key = $1) < $3::bigint
		ON CONFLICT (key, lease) DO UPDATE SET expires_at = excluded.expires_at`
	s.first = `SELECT coalesce(min(expires_at) - ` + nowUS + `, 0) FROM ` + l + ` WHERE key = $1`
	s.renew = `UPDATE ` + l + ` SET expires_at = ` + nowUS + ` + $3::bigint WHERE key = $1 AND lease = $2 AND expires_at > ` + nowUS
	s.release = `DELETE FROM ` + l + ` WHERE key = $1 AND lease = $2`
	s.once = `INSERT INTO ` + o + ` AS o (bucket, id, expires_at) SELECT $1, $2, ` + nowUS + ` + $3::bigint
		WHERE (SELECT count(*) FROM ` + o + ` WHERE bucket = $1 AND expires_at > ` + nowUS + `) < $4::bigint
		ON CONFLICT (bucket, id) DO UPDATE SET expires_at = excluded.expires_at WHERE o.expires_at <= ` + nowUS + `
		RETURNING 0`
	s.seen = `SELECT EXISTS (SELECT 1 FROM ` + o + ` WHERE bucket = $1 AND id = $2 AND expires_at > ` + nowUS + `)`
	s.sweeps = []string{
		`DELETE FROM ` + r + ` WHERE tat < ` + nowUS,
		`DELETE FROM ` + l + ` WHERE expires_at <= ` + nowUS,
		`DELETE FROM ` + o + ` WHERE expires_at <= ` + nowUS,
	}
	return s, nil
}

// Take takes one request from the rate limit key, which allows one
// request per interval and bursts of up to burst (GCRA, the generic cell
// rate algorithm: the row holds the time the next request is due). When
// the limit is reached it returns ok false and the time after which a
// request is allowed again.
func (s *LimitStore) Take(ctx context.Context, key string, interval time.Duration, burst int) (ok bool, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.sweep(ctx)
	key, us, b := fitKey(key), max(interval.Microseconds(), 1), int64(max(burst, 1))
	var zero int
	err = s.pool.QueryRow(ctx, s.take, key, us, b).Scan(&zero)
	if err == nil {
		return true, 0, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return false, 0, fmt.Errorf("pgstore: rate limit at %s: %w", s.where, err)
	}
	var wait int64
	if err := s.pool.QueryRow(ctx, s.wait, key, us, b).Scan(&wait); err != nil {
		return false, 0, fmt.Errorf("pgstore: rate limit at %s: %w", s.where, err)
	}
	return false, time.Duration(max(wait, 1)) * time.Microsecond, nil
}

// Acquire takes one of the max slots of the concurrency cap key as lease
// (an id unique to the holder) for ttl. When all are held it returns ok
// false and the time until the first held lease expires (it may end
// sooner). A lease not renewed within ttl lapses: a holder that died
// gives its slot back.
func (s *LimitStore) Acquire(ctx context.Context, key, lease string, maxHeld int, ttl time.Duration) (ok bool, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.sweep(ctx)
	key, lease = fitKey(key), fitKey(lease)
	var wait int64
	err = readCommitted(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(s.lock, key)
		b.Queue(s.expire, key)
		b.Queue(s.lease, key, lease, int64(maxHeld), max(ttl.Microseconds(), 1))
		b.Queue(s.first, key)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		ok = tag.RowsAffected() == 1
		return br.QueryRow().Scan(&wait)
	})
	if err != nil {
		return false, 0, fmt.Errorf("pgstore: concurrency cap at %s: %w", s.where, err)
	}
	if ok {
		return true, 0, nil
	}
	return false, time.Duration(max(wait, 1000)) * time.Microsecond, nil
}

// Renew extends a held lease by ttl from now; it returns false when the
// lease has lapsed or was released.
func (s *LimitStore) Renew(ctx context.Context, key, lease string, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tag, err := s.pool.Exec(ctx, s.renew, fitKey(key), fitKey(lease), max(ttl.Microseconds(), 1))
	if err != nil {
		return false, fmt.Errorf("pgstore: renewing a lease at %s: %w", s.where, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release gives a lease back.
func (s *LimitStore) Release(ctx context.Context, key, lease string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.release, fitKey(key), fitKey(lease)); err != nil {
		return fmt.Errorf("pgstore: releasing a lease at %s: %w", s.where, err)
	}
	return nil
}

// Once records id in bucket for ttl: fresh is true when it was not there.
// A bucket holds at most about maxLive live ids (replicas recording at
// the same moment may pass it by a few); when it is full, full is true
// and id is not recorded. Replicas sharing the store accept an id once:
// the table's primary key decides.
func (s *LimitStore) Once(ctx context.Context, bucket, id string, ttl time.Duration, maxLive int) (fresh, full bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.sweep(ctx)
	bucket, id = fitKey(bucket), fitKey(id)
	var zero int
	err = s.pool.QueryRow(ctx, s.once, bucket, id, max(ttl.Microseconds(), 1), int64(max(maxLive, 1))).Scan(&zero)
	if err == nil {
		return true, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return false, false, fmt.Errorf("pgstore: replay check at %s: %w", s.where, err)
	}
	var seen bool
	if err := s.pool.QueryRow(ctx, s.seen, bucket, id).Scan(&seen); err != nil {
		return false, false, fmt.Errorf("pgstore: replay check at %s: %w", s.where, err)
	}
	return false, !seen, nil
}

// sweep deletes the rows that ran out, at most once per limitSweepEvery;
// its errors are left to the next one.
func (s *LimitStore) sweep(ctx context.Context) {
	now := time.Now().UnixNano()
	last := s.lastSweep.Load()
	if now-last < int64(limitSweepEvery) || !s.lastSweep.CompareAndSwap(last, now) {
		return
	}
	for _, q := range s.sweeps {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			return
		}
	}
}
