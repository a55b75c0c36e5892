package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/sealed"
)

// DefaultLockTTL is the lifetime of a refresh lock when
// TokenOptions.LockTTL is zero.
const DefaultLockTTL = 30 * time.Second

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
	// LockTTL is the lifetime of the lease a refresh holds: the holder
	// extends it every third of LockTTL while it refreshes, so it lapses
	// only when the holder has stopped or cannot reach the database (then
	// another replica may take over after LockTTL). Zero means
	// DefaultLockTTL.
	LockTTL time.Duration
}

// TokenStore keeps OAuth tokens in PostgreSQL, sealed with
// TokenOptions.Key. It is an mcpadapter.TokenUpdater: replicas refresh a
// token one at a time, each holding a lease row (see Update), and a
// refreshed token is saved only if the row's version is still the one
// the refresh read, so a rotated refresh token is never lost. No
// transaction is open while the refresh runs.
type TokenStore struct {
	pool             *pgxpool.Pool
	box              *sealed.Box
	keyPrefix, table string
	load, save, del  string
	lockQ, extendQ   string
	unlockQ, casQ    string
	insertQ, dataQ   string
	where            string
	timeout, lockTTL time.Duration
}

var _ mcpadapter.TokenUpdater = (*TokenStore)(nil)

// NewTokenStore checks that the tokens and token_locks tables are there
// (creating them only if one is missing) and returns a TokenStore on
// them, or an error when opts gives neither a valid Key nor Plaintext.
func NewTokenStore(ctx context.Context, pool *pgxpool.Pool, opts *TokenOptions) (*TokenStore, error) {
	if opts == nil {
		opts = &TokenOptions{}
	}
	box, err := sealed.New(opts.Key, opts.Plaintext)
	if err != nil {
		return nil, fmt.Errorf("pgstore: NewTokenStore: %w", err)
	}
	if err := ensure(ctx, pool, &opts.Options, opts.Options.timeout(), "tokens", "token_locks"); err != nil {
		return nil, err
	}
	t, l := opts.Options.table("tokens"), opts.Options.table("token_locks")
	ttl := opts.LockTTL
	if ttl <= 0 {
		ttl = DefaultLockTTL
	}
	return &TokenStore{
		pool: pool, box: box, keyPrefix: opts.KeyPrefix, table: t,
		load: `SELECT data, version FROM ` + t + ` WHERE key = $1`,
		save: `INSERT INTO ` + t + ` (key, data) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, version = ` + t + `.version + 1, updated_at = now()`,
		del:  `DELETE FROM ` + t + ` WHERE key = $1`,
		// The lease: taken when free, lapsed, or already this owner's (an
		// attempt whose answer was lost, sent again).
		lockQ: `INSERT INTO ` + l + ` AS l (key, owner, expires_at) VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
			ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
			WHERE l.expires_at <= clock_timestamp() OR l.owner = EXCLUDED.owner`,
		extendQ: `UPDATE ` + l + ` SET expires_at = clock_timestamp() + $3 * interval '1 millisecond' WHERE key = $1 AND owner = $2 AND expires_at > clock_timestamp()`,
		unlockQ: `DELETE FROM ` + l + ` WHERE key = $1 AND owner = $2`,
		casQ:    `UPDATE ` + t + ` SET data = $2, version = version + 1, updated_at = now() WHERE key = $1 AND version = $3`,
		insertQ: `INSERT INTO ` + t + ` (key, data) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
		dataQ:   `SELECT data FROM ` + t + ` WHERE key = $1`,
		where:   where(pool),
		timeout: opts.Options.timeout(), lockTTL: ttl,
	}, nil
}

// rowKey is key as stored: KeyPrefix and key, fitted to the index.
func (s *TokenStore) rowKey(key string) string { return fitKey(s.keyPrefix + key) }

// Load returns the token kept for key, or nil.
func (s *TokenStore) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	t, _, _, err := s.read(ctx, key)
	return t, err
}

// read returns the token kept for key, its version (0: none) and its
// stored form.
func (s *TokenStore) read(ctx context.Context, key string) (*mcpadapter.StoredToken, int64, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var b []byte
	var version int64
	var err error
	for range 3 { // a read may run again after a connection failure
		if err = s.pool.QueryRow(ctx, s.load, s.rowKey(key)).Scan(&b, &version); err == nil || !connectionError(err) || ctx.Err() != nil {
			break
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil, nil
	}
	if err != nil {
		return nil, 0, nil, fmt.Errorf("pgstore: reading the token of %q from %s: %w", key, s.where, err)
	}
	plain, err := s.box.Open(s.table+" "+s.keyPrefix+key, b)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("pgstore: the token of %q in %s: %w", key, s.where, err)
	}
	var t mcpadapter.StoredToken
	if err := json.Unmarshal(plain, &t); err != nil {
		return nil, 0, nil, fmt.Errorf("pgstore: the token of %q in %s is not a stored token: %w", key, s.where, err)
	}
	return &t, version, b, nil
}

// Save keeps t for key, replacing what was there.
func (s *TokenStore) Save(ctx context.Context, key string, t *mcpadapter.StoredToken) error {
	b, err := s.seal(key, t)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := exec(ctx, s.pool, s.save, s.rowKey(key), b); err != nil {
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
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := exec(ctx, s.pool, s.del, s.rowKey(key)); err != nil {
		return fmt.Errorf("pgstore: deleting the token of %q from %s: %w", key, s.where, err)
	}
	return nil
}
