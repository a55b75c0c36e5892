package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/sealed"
)

// TokenOptions configures a TokenStore.
type TokenOptions struct {
	Options
	// KeyPrefix starts every key (for one store per user in one table).
	KeyPrefix string
	// Key encrypts tokens at rest (AES-GCM; 16, 24 or 32 bytes). Give
	// every replica the same key; keep it out of the database.
	Key []byte
	// Plaintext stores tokens unencrypted when Key is empty. Without Key
	// or Plaintext, NewTokenStore fails.
	Plaintext bool
}

// TokenStore keeps OAuth tokens in PostgreSQL, sealed with
// TokenOptions.Key. It is an mcpadapter.TokenUpdater: replicas refresh a
// token one at a time, each in a transaction holding an advisory lock on
// the key (pg_advisory_xact_lock), so a rotated refresh token is never
// lost; a crashed replica's lock ends with its connection.
type TokenStore struct {
	pool             *pgxpool.Pool
	box              *sealed.Box
	keyPrefix, table string
	load, save, del  string
	where            string
}

var _ mcpadapter.TokenUpdater = (*TokenStore)(nil)

// NewTokenStore creates the tokens table if it is missing and returns a
// TokenStore on it, or an error when opts gives neither a valid Key nor
// Plaintext.
func NewTokenStore(ctx context.Context, pool *pgxpool.Pool, opts *TokenOptions) (*TokenStore, error) {
	if opts == nil {
		opts = &TokenOptions{}
	}
	box, err := sealed.New(opts.Key, opts.Plaintext)
	if err != nil {
		return nil, fmt.Errorf("pgstore: NewTokenStore: %w", err)
	}
	if err := migrate(ctx, pool, &opts.Options, "tokens"); err != nil {
		return nil, err
	}
	t := opts.Options.table("tokens")
	return &TokenStore{
		pool: pool, box: box, keyPrefix: opts.KeyPrefix, table: t,
		load:  `SELECT data FROM ` + t + ` WHERE key = $1`,
		save:  `INSERT INTO ` + t + ` (key, data) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, version = ` + t + `.version + 1, updated_at = now()`,
		del:   `DELETE FROM ` + t + ` WHERE key = $1`,
		where: where(pool),
	}, nil
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Load returns the token kept for key, or nil.
func (s *TokenStore) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	return s.loadWith(ctx, s.pool, key)
}

func (s *TokenStore) loadWith(ctx context.Context, q querier, key string) (*mcpadapter.StoredToken, error) {
	var b []byte
	err := q.QueryRow(ctx, s.load, s.keyPrefix+key).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: reading the token of %q from %s: %w", key, s.where, err)
	}
	plain, err := s.box.Open(s.table+" "+s.keyPrefix+key, b)
	if err != nil {
		return nil, fmt.Errorf("pgstore: the token of %q in %s: %w", key, s.where, err)
	}
	var t mcpadapter.StoredToken
	if err := json.Unmarshal(plain, &t); err != nil {
		return nil, fmt.Errorf("pgstore: the token of %q in %s is not a stored token: %w", key, s.where, err)
	}
	return &t, nil
}

// Save keeps t for key, replacing what was there.
func (s *TokenStore) Save(ctx context.Context, key string, t *mcpadapter.StoredToken) error {
	b, err := s.seal(key, t)
	if err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, s.save, s.keyPrefix+key, b); err != nil {
		return fmt.Errorf("pgstore: saving the token of %q to %s: %w", key, s.where, err)
	}
	return nil
}

func (s *TokenStore) seal(key string, t *mcpadapter.StoredToken) ([]byte, error) {
	plain, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("pgstore: encoding the token of %q: %w", key, err)
	}
	return s.box.Seal(s.table+" "+s.keyPrefix+key, plain), nil
}

// Delete removes the token kept for key.
func (s *TokenStore) Delete(ctx context.Context, key string) error {
	if _, err := s.pool.Exec(ctx, s.del, s.keyPrefix+key); err != nil {
		return fmt.Errorf("pgstore: deleting the token of %q from %s: %w", key, s.where, err)
	}
	return nil
}

// Update locks key among every process sharing the database (an advisory
// lock held by a transaction), calls fn with the token stored under it
// (nil if none), and saves the token fn returns (nil: nothing to save) in
// the same transaction.
func (s *TokenStore) Update(ctx context.Context, key string, fn func(*mcpadapter.StoredToken) (*mcpadapter.StoredToken, error)) error {
	var fnErr error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, s.table+" "+s.keyPrefix+key); err != nil {
			return err
		}
		cur, err := s.loadWith(ctx, tx, key)
		if err != nil {
			return err
		}
		next, err := fn(cur)
		if err != nil {
			fnErr = err
			return err
		}
		if next == nil {
			return nil
		}
		b, err := s.seal(key, next)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, s.save, s.keyPrefix+key, b)
		return err
	})
	switch {
	case fnErr != nil:
		return fmt.Errorf("pgstore: updating the token of %q: %w", key, fnErr)
	case err != nil:
		return fmt.Errorf("pgstore: updating the token of %q at %s: %w", key, s.where, err)
	}
	return nil
}
