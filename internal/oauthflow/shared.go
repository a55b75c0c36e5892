package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// An Updater is a Store that several processes share and that can lock
// one key among all of them (a lease row in a database, a lock key in
// Redis, a file lock). With one, a token is refreshed inside Update: the
// refresh reads the store first and takes a token another process has
// refreshed meanwhile, so a refresh token that the authorization server
// rotates is used once and never lost.
type Updater interface {
	Store
	// Update locks key among every process sharing the store, calls fn
	// with the token stored under it (nil if none) and, if fn returns a
	// token, saves it unless the stored token changed since it was read
	// (an error wrapping ErrTokenChanged), then unlocks. fn's context ends
	// before the lock can pass to another process, so a refresh request
	// made with it cannot overlap another process's. An error from fn is
	// returned, wrapped, and nothing is saved.
	Update(ctx context.Context, key string, fn func(ctx context.Context, cur *StoredToken) (*StoredToken, error)) error
}

// ErrTokenChanged is wrapped by an Updater's error when the token fn
// returned was not saved because another process had saved one after it
// was read (possible only when the lock was lost).
var ErrTokenChanged = errors.New("the stored token changed during the update")

// errBoundElsewhere is the failure of a refresh whose stored token another
// process signed in bound to another DPoP key (a public client's, which
// this key cannot refresh): its principal signs in again.
var errBoundElsewhere = errors.New("the stored token is bound to another DPoP key and cannot be refreshed with this one")

// sharedRefreshTimeout bounds one refresh through an Updater: waiting for
// the lock, reading, the refresh request and the save.
const sharedRefreshTimeout = 30 * time.Second

// A token refreshed but not saved (the store was unreachable) is saved
// again in the background and at the next use of the token, no sooner
// than saveRetryFirst after the failure, then backing off up to
// saveRetryMax; each try is bounded by saveRetryTimeout.
const (
	saveRetryFirst   = time.Second
	saveRetryMax     = time.Minute
	saveRetryTimeout = 5 * time.Second
)

// sharedRefresher is the oauth2.TokenSource of a token kept in an
// Updater. It hands out its token while it is valid and, once it has
// expired, refreshes it through the Updater: it takes a token another
// process stored meanwhile, or refreshes the newest stored refresh token
// and stores the result. A token the authorization server issued is never
// dropped: when the store cannot take it, it is kept here, handed out, and
// saved again later, by a goroutine of the Handler's (see keepSaving)
// whether or not the token is used again.
type sharedRefresher struct {
	store Updater
	key   string
	oc    *oauth2.Config
	hc    *http.Client
	dpop  *DPoP
	log   *slog.Logger
	bg    *background // runs the saves tried again on their own; nil: none

	mu      sync.Mutex    // one Token at a time
	saving  bool          // a goroutine of bg saves unsaved
	last    *oauth2.Token // the token handed out
	spent   string        // the refresh token this process used last
	unsaved *StoredToken  // last, when the store has not taken it yet
	force   bool          // unsaved is a sign-in's: it replaces whatever is stored
	retryAt time.Time     // when to try saving unsaved again
	wait    time.Duration // the current back-off
}

// newSharedRefresher returns the source of tok, kept under key in u.
// unsaved says the store does not hold tok (its save after a sign-in
// failed): it is saved in the background (bg) and at the first use.
func newSharedRefresher(u Updater, key string, oc *oauth2.Config, hc *http.Client, d *DPoP, log *slog.Logger, bg *background, tok *oauth2.Token, unsaved bool) *sharedRefresher {
	r := &sharedRefresher{store: u, key: key, oc: oc, hc: hc, dpop: d, log: log, bg: bg, last: tok}
	if unsaved {
		r.mu.Lock()
		r.unsaved, r.force = storedFrom(oc, tok, d), true
		r.keepSaving()
		r.mu.Unlock()
	}
	return r
}

// Token returns the current token, refreshing it if it has expired.
func (r *sharedRefresher) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last.Valid() {
		if r.unsaved != nil && !time.Now().Before(r.retryAt) {
			r.saveUnsaved()
		}
		return r.last, nil
	}
	return r.refresh()
}

// stale reports whether cur is older than the token this process holds:
// nothing stored, or the refresh token this process has already used.
func (r *sharedRefresher) stale(cur *StoredToken) bool {
	return cur == nil || cur.Token == nil || (r.spent != "" && cur.Token.RefreshToken == r.spent)
}

// refresh takes a token another process stored since last, if it is
// valid, or refreshes the newest refresh token and stores the result.
func (r *sharedRefresher) refresh() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedRefreshTimeout)
	defer cancel()
	var out *oauth2.Token
	var made *StoredToken
	err := r.store.Update(ctx, r.key, func(ctx context.Context, cur *StoredToken) (*StoredToken, error) {
		out, made = nil, nil
		fresh := !r.stale(cur)
		if fresh && cur.Token.AccessToken != r.last.AccessToken {
			t := cur.usable(r.dpop)
			if t == nil {
				return nil, errBoundElsewhere
			}
			if t.Valid() {
				out = t // refreshed by another process
				return nil, nil
			}
		}
		rt := r.last.RefreshToken
		if fresh && cur.Token.RefreshToken != "" {
			rt = cur.Token.RefreshToken // the newest
		}
		if rt == "" {
			return nil, errors.New("the token has expired and there is no refresh token")
		}
		tok, err := r.oc.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, r.hc), &oauth2.Token{RefreshToken: rt}).Token()
		if err != nil {
			return nil, err
		}
		r.spent = rt
		out, made = tok, storedFrom(r.oc, tok, r.dpop)
		return made, nil
	})
	switch {
	case err == nil:
		r.last, r.unsaved = out, nil
		return out, nil
	case made != nil && errors.Is(err, ErrTokenChanged):
		// Another process saved a token after this one read the store (its
		// lock had lapsed); both are the authorization server's. Keep this
		// one for this process.
		r.log.Warn("another process stored an OAuth token during this refresh; keeping this one in memory", "err", err)
		r.last, r.unsaved = out, nil
		return out, nil
	case made == nil && out != nil:
		r.last = out // taken from the store; only the unlock failed
		return out, nil
	case made != nil:
		r.log.Warn("could not save the refreshed OAuth token; keeping it in memory and saving it again later", "err", err)
		r.last, r.unsaved, r.force = out, made, false
		r.backoff()
		r.keepSaving()
		return out, nil
	}
	return nil, fmt.Errorf("refreshing the OAuth token through the shared store: %w", err)
}

// saveUnsaved tries once more to store the token this process holds,
// unless another process stored a newer one meanwhile.
func (r *sharedRefresher) saveUnsaved() {
	ctx, cancel := context.WithTimeout(context.Background(), saveRetryTimeout)
	defer cancel()
	err := r.store.Update(ctx, r.key, func(_ context.Context, cur *StoredToken) (*StoredToken, error) {
		if !r.force && !r.stale(cur) {
			return nil, nil // a newer one is stored; this one stays in memory
		}
		return r.unsaved, nil
	})
	if err == nil || errors.Is(err, ErrTokenChanged) {
		r.unsaved, r.wait = nil, 0
		return
	}
	r.log.Warn("could not save the OAuth token; it is kept in memory", "err", err)
	r.backoff()
	r.keepSaving()
}

// backoff sets when to try saving again.
func (r *sharedRefresher) backoff() {
	r.wait = min(max(2*r.wait, saveRetryFirst), saveRetryMax)
	r.retryAt = time.Now().Add(r.wait)
}
