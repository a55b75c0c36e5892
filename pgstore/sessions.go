package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SessionStore keeps the sessions of a gateway's handshake-era clients in
// PostgreSQL, so that every replica serves every session: it is a
// gateway.SessionStore. A session's record is one row with the time it
// expires, by the database's clock; rows that ran out are deleted now and
// then by the store's own operations.
//
// It is a gateway.SessionNotifier too: NotifySession sends the id of a
// changed session as a PostgreSQL notification (pg_notify) on the
// channel named as the sessions' table ("mcpadapter_sessions"; a longer
// name is replaced by a hash of it), and SubscribeSessions listens on it
// (LISTEN) with a connection taken out of the pool for itself, so that
// the replica a client's answer was handed to takes it at once instead
// of at its next poll. A notification carries the session's id only.
type SessionStore struct {
	recs    *records
	claims  *records // claims of requests, by session and request: "session:request"
	notices *notices
}

// NewSessionStore checks the store's table on pool (creating it when it
// is missing, as Migrate does) and returns a SessionStore on it.
// Options.Timeout bounds each operation, and the making of a
// subscription to the notices; Options.Logger gets why a subscription
// ended.
func NewSessionStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*SessionStore, error) {
	recs, err := newRecords(ctx, pool, opts, "sessions", "a session")
	if err != nil {
		return nil, err
	}
	claims, err := newRecords(ctx, pool, opts, "session_claims", "a claim of a request")
	if err != nil {
		return nil, err
	}
	return &SessionStore{recs: recs, claims: claims, notices: newNotices(pool, opts, "sessions")}, nil
}

// LoadSession returns the record of session id, or nil and no error when
// there is none (or it expired).
func (s *SessionStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	return s.recs.load(ctx, id)
}

// SaveSession stores rec as the record of session id, expiring ttl after
// now.
func (s *SessionStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	return s.recs.save(ctx, id, rec, ttl)
}

// ReplaceSession stores rec as the record of session id, expiring ttl
// after now, only if the session's record is old and has not expired
// (one UPDATE): it reports whether it did.
func (s *SessionStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.replace(ctx, id, old, rec, ttl)
}

// DeleteSession removes the record of session id.
func (s *SessionStore) DeleteSession(ctx context.Context, id string) error {
	return s.recs.remove(ctx, id)
}

// ClaimRequest records a claim of request in session by owner (the
// row's data), expiring ttl after now, only if there is none or it
// expired (one INSERT … ON CONFLICT): it reports whether it did.
func (s *SessionStore) ClaimRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	return s.claims.add(ctx, session+":"+request, []byte(owner), ttl)
}

// RenewRequest makes the claim of request in session expire ttl after
// now, only if it has not expired and is owner's (one UPDATE): it
// reports whether it did.
func (s *SessionStore) RenewRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	return s.claims.replace(ctx, session+":"+request, []byte(owner), []byte(owner), ttl)
}

// ReleaseRequest removes the claim of request in session only if it is
// owner's (one DELETE … WHERE data = owner).
func (s *SessionStore) ReleaseRequest(ctx context.Context, session, request, owner string) error {
	return s.claims.removeIf(ctx, session+":"+request, []byte(owner))
}

// NotifySession sends id as a notification on the store's channel:
// every replica subscribed (SubscribeSessions) gets it.
func (s *SessionStore) NotifySession(ctx context.Context, id string) error {
	return s.notices.notify(ctx, id)
}

// SubscribeSessions takes a connection out of the pool for itself,
// listens on the store's channel with it and returns, once listening, a
// channel of the session ids notified on it. The channel is closed, and
// the connection with it (it never goes back to the pool), when ctx ends
// or the connection fails (terminated by the server, or no answer to a
// check within Options.Timeout after 15 s without a notification): the
// notifications sent meanwhile are lost, and the caller subscribes
// again. The goroutine reading the notifications ends with it.
func (s *SessionStore) SubscribeSessions(ctx context.Context) (<-chan string, error) {
	return s.notices.subscribe(ctx)
}
