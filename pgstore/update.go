package pgstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mcpadapter/mcpadapter"
)

// Attempts of the writes that must not be lost: the save of a refreshed
// token and the release of a lease.
const (
	saveAttempts    = 4
	releaseAttempts = 3
)

// errLeaseLapsed ends fn's context when the lease could not be kept.
var errLeaseLapsed = errors.New("pgstore: the token lease could not be extended; the refresh was stopped before another process could take the lease")

// Update takes the lease of key among every process sharing the database
// (a row in the token_locks table, expiring LockTTL after it was last
// extended, by the database's clock), reads the token and its version,
// and calls fn with no transaction open, extending the lease every third
// of LockTTL; fn's context ends a third of LockTTL before the lease could
// lapse (if the database stops answering the extensions), so a refresh
// never overlaps another replica's. The token fn returns (nil: nothing
// to save) is saved if the version is still the one read (else an error
// wrapping mcpadapter.ErrTokenChanged), in a READ COMMITTED transaction
// that also releases the lease, with a bounded context of its own and
// retries, whatever ctx has become. Waiting for another process's lease
// holds no connection.
func (s *TokenStore) Update(ctx context.Context, key string, fn func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error)) error {
	owner := rand.Text()
	since, err := s.lock(ctx, key, owner)
	if err != nil {
		s.release(ctx, key, owner) // an attempt whose answer was lost may hold it
		return err
	}
	cur, version, _, err := s.read(ctx, key)
	if err != nil {
		s.release(ctx, key, owner)
		return err
	}
	fctx, stop := s.hold(ctx, key, owner, since)
	next, err := fn(fctx, cur)
	if err != nil || next == nil {
		stop()
	} else {
		defer stop() // the lock is kept through the save
	}
	if err != nil {
		s.release(ctx, key, owner)
		return fmt.Errorf("pgstore: updating the token of %q: %w", key, err)
	}
	if next == nil {
		s.release(ctx, key, owner)
		return nil
	}
	b, err := s.seal(key, next)
	if err != nil {
		s.release(ctx, key, owner)
		return err
	}
	// Not ctx: a token the authorization server issued is saved even when
	// the caller has stopped waiting.
	wctx := context.WithoutCancel(ctx)
	var saved bool
	err = s.retry(wctx, saveAttempts, func(ctx context.Context) error {
		var err error
		saved, err = s.compareAndSave(ctx, key, owner, version, b)
		return err
	})
	if err != nil {
		s.release(wctx, key, owner)
		return fmt.Errorf("pgstore: saving the token of %q to %s: %w", key, s.where, err)
	}
	if !saved {
		return fmt.Errorf("pgstore: the token of %q in %s: %w", key, s.where, mcpadapter.ErrTokenChanged)
	}
	return nil
}

// compareAndSave writes b as the token of key if its version is still
// version (0: no row), releases owner's lease, and reports whether the
// row holds b afterwards (a save whose commit was answered too late,
// sent again, finds it there).
func (s *TokenStore) compareAndSave(ctx context.Context, key, owner string, version int64, b []byte) (bool, error) {
	var saved bool
	err := readCommitted(ctx, s.pool, func(tx pgx.Tx) error {
		var tag pgconn.CommandTag
		var err error
		if version == 0 {
			tag, err = tx.Exec(ctx, s.insertQ, s.rowKey(key), b)
		} else {
			tag, err = tx.Exec(ctx, s.casQ, s.rowKey(key), b, version)
		}
		if err != nil {
			return err
		}
		saved = tag.RowsAffected() == 1
		if !saved {
			var now []byte
			if err := tx.QueryRow(ctx, s.dataQ, s.rowKey(key)).Scan(&now); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			saved = bytes.Equal(now, b)
		}
		_, err = tx.Exec(ctx, s.unlockQ, s.rowKey(key), owner)
		return err
	})
	return saved, err
}

// lock takes the lease of key for owner, polling while another process
// holds it, until ctx ends. It returns when the successful attempt was
// sent: the lease lasts at least LockTTL from then.
func (s *TokenStore) lock(ctx context.Context, key, owner string) (time.Time, error) {
	wait := 5 * time.Millisecond
	var failures int
	for {
		sent := time.Now()
		actx, cancel := context.WithTimeout(ctx, s.timeout)
		n, err := execAgain(actx, s.pool, s.lockQ, s.rowKey(key), owner, s.lockTTL.Milliseconds())
		cancel()
		switch {
		case err == nil && n == 1:
			return sent, nil
		case err != nil && ctx.Err() == nil:
			// Sent again with the same owner: if the lost attempt took
			// the lease, this one finds it ours.
			if failures++; failures >= 3 {
				return time.Time{}, fmt.Errorf("pgstore: locking the token of %q at %s: %w", key, s.where, err)
			}
		case err == nil:
			failures = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, fmt.Errorf("pgstore: waiting for another process's refresh of the token of %q at %s: %w", key, s.where, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// hold extends the lease of key every third of LockTTL while fn runs
// (since is when the lease was last known to last LockTTL from). The
// context it returns ends a third of LockTTL before the lease could
// lapse: when an extension fails and none succeeds in time, or when
// another owner has the lease. stop ends the extensions and waits for
// them.
func (s *TokenStore) hold(ctx context.Context, key, owner string, since time.Time) (context.Context, func()) {
	fctx, cancel := context.WithCancelCause(ctx)
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		margin := s.lockTTL / 3
		valid := since.Add(s.lockTTL)
		next := since.Add(s.lockTTL / 3)
		for {
			t := time.NewTimer(min(time.Until(next), time.Until(valid.Add(-margin))))
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
			if !time.Now().Before(valid.Add(-margin)) {
				cancel(errLeaseLapsed)
				return
			}
			sent := time.Now()
			ectx, ecancel := context.WithTimeout(fctx, min(s.timeout, time.Until(valid.Add(-margin))))
			n, err := execAgain(ectx, s.pool, s.extendQ, s.rowKey(key), owner, s.lockTTL.Milliseconds())
			ecancel()
			switch {
			case err == nil && n == 1:
				valid, next = sent.Add(s.lockTTL), sent.Add(s.lockTTL/3)
			case err == nil:
				cancel(errLeaseLapsed) // lapsed, or another owner has it
				return
			default:
				next = time.Now().Add(s.lockTTL / 10) // try again soon
			}
		}
	}()
	return fctx, func() {
		close(done)
		<-ended
		cancel(nil)
	}
}

// release gives up owner's lease of key, with a bounded context of its
// own (not ctx's end) and a few attempts. A lease it cannot release
// lapses after LockTTL.
func (s *TokenStore) release(ctx context.Context, key, owner string) {
	_ = s.retry(context.WithoutCancel(ctx), releaseAttempts, func(ctx context.Context) error {
		_, err := execAgain(ctx, s.pool, s.unlockQ, s.rowKey(key), owner)
		return err
	})
}

// retry runs op up to attempts times, each bounded by Options.Timeout,
// backing off between them.
func (s *TokenStore) retry(ctx context.Context, attempts int, op func(context.Context) error) error {
	var err error
	wait := 50 * time.Millisecond
	for i := range attempts {
		if i > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return errors.Join(err, ctx.Err())
			case <-t.C:
			}
			wait *= 4
		}
		actx, cancel := context.WithTimeout(ctx, s.timeout)
		err = op(actx)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}
