package oauthflow

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// An Updater is a Store that several processes share and that can lock
// one key among all of them (a database row lock, a Redis lock). With one,
// a token is refreshed inside Update: the refresh reads the store first
// and takes a token another process has refreshed meanwhile, so a refresh
// token that the authorization server rotates is used once and never lost.
type Updater interface {
	Store
	// Update locks key among every process sharing the store, calls fn
	// with the token stored under it (nil if none) and, if fn returns a
	// token, saves it before unlocking. An error from fn is returned and
	// nothing is saved.
	Update(ctx context.Context, key string, fn func(cur *StoredToken) (*StoredToken, error)) error
}

// sharedRefreshTimeout bounds one refresh through an Updater: waiting for
// the lock, reading, the refresh request and the save.
const sharedRefreshTimeout = 30 * time.Second

// sharedRefresher is an oauth2.TokenSource that refreshes through an
// Updater. It is wrapped in an oauth2.ReuseTokenSource, which calls it only
// when the token it holds has expired, one call at a time.
type sharedRefresher struct {
	store Updater
	key   string
	oc    *oauth2.Config
	hc    *http.Client
	last  *oauth2.Token // the token this source gave out last
}

// Token returns a token another process stored since last, if it is
// valid, or refreshes the stored refresh token (the newest one) and stores
// the result.
func (r *sharedRefresher) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedRefreshTimeout)
	defer cancel()
	var out *oauth2.Token
	err := r.store.Update(ctx, r.key, func(cur *StoredToken) (*StoredToken, error) {
		if cur != nil && cur.Token != nil && cur.Token.Valid() && cur.Token.AccessToken != r.last.AccessToken {
			out = cur.token() // refreshed by another process
			return nil, nil
		}
		old := &oauth2.Token{RefreshToken: r.last.RefreshToken}
		if cur != nil && cur.Token != nil && cur.Token.RefreshToken != "" {
			old.RefreshToken = cur.Token.RefreshToken
		}
		tok, err := r.oc.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, r.hc), old).Token()
		if err != nil {
			return nil, err
		}
		out = tok
		return storedFrom(r.oc, tok), nil
	})
	if err != nil {
		return nil, fmt.Errorf("refreshing the OAuth token through the shared store: %w", err)
	}
	r.last = out
	return out, nil
}
