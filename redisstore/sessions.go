package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// SessionStore keeps the sessions of a gateway's handshake-era clients in
// Redis, so that every replica serves every session: it is a
// gateway.SessionStore. A session's record is one key with the session's
// lifetime as its expiry.
//
// It is a gateway.SessionNotifier too: NotifySession publishes the id of
// a changed session on the channel PREFIX+"sessions" (Redis PUBLISH), and
// SubscribeSessions subscribes to it on a connection of its own
// (SUBSCRIBE), so that the replica a client's answer was handed to takes
// it at once instead of at its next poll. A notice carries the session's
// id only.
type SessionStore struct {
	recs    records
	claims  records // claims of requests: PREFIX+"claim:"+session+":"+request
	channel string
	log     *slog.Logger
}

// NewSessionStore returns a SessionStore on rdb. Options.Timeout bounds
// each operation, and the making of a subscription to the notices;
// Options.Logger gets why a subscription ended.
func NewSessionStore(rdb redis.UniversalClient, opts *Options) *SessionStore {
	return &SessionStore{recs: newRecords(rdb, opts, "session", "a session"), claims: newRecords(rdb, opts, "claim", "a claim of a request"),
		channel: opts.prefix() + "sessions", log: opts.logger()}
}

// LoadSession returns the record of session id, or nil and no error when
// there is none.
func (s *SessionStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	return s.recs.load(ctx, id)
}

// SaveSession stores rec as the record of session id, expiring ttl after
// now.
func (s *SessionStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	return s.recs.save(ctx, id, rec, ttl)
}

// ReplaceSession stores rec as the record of session id, expiring ttl
// after now, only if the session's record is old (one script): it
// reports whether it did.
func (s *SessionStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	return s.recs.replace(ctx, id, old, rec, ttl)
}

// DeleteSession removes the record of session id.
func (s *SessionStore) DeleteSession(ctx context.Context, id string) error {
	return s.recs.remove(ctx, id)
}

// ClaimRequest records a claim of request in session by owner, expiring
// ttl after now, only if there is none (SET NX PX, the key holding
// owner): it reports whether it did.
func (s *SessionStore) ClaimRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	return s.claims.add(ctx, session+":"+request, []byte(owner), ttl)
}

// RenewRequest makes the claim of request in session expire ttl after
// now, only if it is there and owner's (one script): it reports whether
// it did.
func (s *SessionStore) RenewRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	return s.claims.replace(ctx, session+":"+request, []byte(owner), []byte(owner), ttl)
}

// ReleaseRequest removes the claim of request in session only if it is
// owner's (one script: GET, compare, DEL).
func (s *SessionStore) ReleaseRequest(ctx context.Context, session, request, owner string) error {
	return s.claims.removeIf(ctx, session+":"+request, []byte(owner))
}

// NotifySession publishes id on the store's channel: every replica
// subscribed (SubscribeSessions) gets it.
func (s *SessionStore) NotifySession(ctx context.Context, id string) error {
	r := s.recs.r
	err := r.do(ctx, s.recs.timeout, func(ctx context.Context) error { return r.rdb.Publish(ctx, s.channel, id).Err() })
	if err != nil {
		return fmt.Errorf("redisstore: publishing a notice of a session at %s: %w", r.where, err)
	}
	return nil
}

// healthCheck is how long a subscription waits for a notice before it
// pings Redis; a subscription that has not had the answer to its ping
// when healthCheck has passed again ends (its network lost its route).
const healthCheck = 15 * time.Second

// SubscribeSessions subscribes to the store's channel on a connection of
// its own and returns, once Redis confirmed it, a channel of the session
// ids published on it. The channel is closed, and the connection with
// it, when ctx ends or the connection fails (closed by Redis, or no
// answer to a ping within healthCheck): the notices published meanwhile
// are lost, and the caller subscribes again. The goroutine reading the
// subscription ends with it.
func (s *SessionStore) SubscribeSessions(ctx context.Context) (<-chan string, error) {
	r := s.recs.r
	ps := r.rdb.Subscribe(ctx, s.channel)
	// The first reply is Redis's confirmation of the subscription.
	_, err := call(r, ctx, s.recs.timeout, func(ctx context.Context) (any, error) { return ps.ReceiveTimeout(ctx, s.recs.timeout) })
	if err != nil {
		_ = ps.Close()
		return nil, fmt.Errorf("redisstore: subscribing to the notices of sessions at %s: %w", r.where, err)
	}
	out := make(chan string, 64)
	go func() {
		defer close(out)
		stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
		defer stop()
		defer ps.Close()
		if err := s.receive(ctx, ps, out); err != nil && ctx.Err() == nil {
			s.log.Warn("redisstore: the subscription to the notices of sessions ended", "where", r.where, "err", err)
		}
	}()
	return out, nil
}

// receive passes the payloads of the messages ps gets to out until ctx
// ends or ps fails.
func (s *SessionStore) receive(ctx context.Context, ps *redis.PubSub, out chan<- string) error {
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, healthCheck)
		var ne net.Error
		switch {
		case err != nil && errors.As(err, &ne) && ne.Timeout() && !pinged && ctx.Err() == nil:
			if err := ps.Ping(ctx); err != nil {
				return err
			}
			pinged = true
			continue
		case err != nil:
			return err
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Message:
			select {
			case out <- m.Payload:
			case <-ctx.Done():
				return ctx.Err()
			}
		case *redis.Subscription:
			// go-redis made the subscription again on a new connection
			// (or ended it): notices may have been lost meanwhile.
			return fmt.Errorf("the subscription changed on its own (%s %s)", m.Kind, m.Channel)
		}
	}
}
