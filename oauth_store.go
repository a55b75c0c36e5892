package mcpadapter

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"golang.org/x/oauth2"
)

// A TokenStore keeps OAuth tokens between runs, keyed by the MCP server's
// URL. Implementations must be safe for concurrent use. Load returns nil
// and no error when it has nothing for key.
type TokenStore interface {
	Load(ctx context.Context, key string) (*StoredToken, error)
	Save(ctx context.Context, key string, t *StoredToken) error
}

// A TokenUpdater is a TokenStore that several processes share and that
// can lock one key among all of them (a lease in a database or in Redis,
// a file lock). When OAuth.Store is one, an expired token is refreshed
// inside Update: the refresh reads the store first and takes a token
// another process refreshed meanwhile, and otherwise uses the newest
// stored refresh token, so a refresh token the authorization server
// rotates is used once and never lost. A refreshed token the store cannot
// take is kept in memory, used, and saved again later. The redisstore and
// pgstore modules implement it, and so does NewFileTokenStore's store.
type TokenUpdater interface {
	TokenStore
	// Update locks key among every process sharing the store, calls fn
	// with the token stored under key (nil if none) and, if fn returns a
	// token, saves it unless the stored token changed since it was read
	// (an error wrapping ErrTokenChanged), then unlocks. fn's context ends
	// before the lock can pass to another process (a lock with a lifetime
	// is extended while fn runs, and fn's context ends before the last
	// extension runs out), so a refresh request made with it cannot
	// overlap another process's. An error from fn is returned, wrapped,
	// and nothing is saved.
	Update(ctx context.Context, key string, fn func(ctx context.Context, cur *StoredToken) (*StoredToken, error)) error
}

// ErrTokenChanged is wrapped by the error of TokenUpdater.Update when the
// token fn returned was not saved because another process saved one after
// it was read.
var ErrTokenChanged = oauthflow.ErrTokenChanged

// StoredToken is what a TokenStore keeps for one server: the token and
// what is needed to refresh it without asking the user again. It holds
// secrets: its String and LogValue methods print none of them.
type StoredToken struct {
	Token *oauth2.Token `json:"token"`
	// Scopes are the scopes the token was granted (or asked for).
	Scopes []string `json:"scopes,omitempty"`
	// The client and authorization server the token came from.
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	// DPoPThumbprint is the JWK SHA-256 thumbprint (RFC 7638) of the DPoP
	// key the token is bound to (OAuth.DPoPKey); empty for a bearer
	// token. A bound token is used only by a client with the same key.
	// A confidential client (with a ClientSecret) with another key
	// refreshes it with its own key's proof; a public client's refresh
	// token is bound to the key too (RFC 9449, section 5), so a client
	// with another key signs in again. Give every process that shares a
	// token store the same DPoPKey.
	DPoPThumbprint string `json:"dpop_jkt,omitempty"`
}

// String describes t without its secrets.
func (t *StoredToken) String() string { return (*oauthflow.StoredToken)(t).String() }

// LogValue describes t for log/slog without its secrets.
func (t *StoredToken) LogValue() slog.Value { return slog.StringValue(t.String()) }

// NewMemoryTokenStore returns a TokenStore that keeps tokens in memory.
func NewMemoryTokenStore() TokenStore {
	return oauthflow.Outward[StoredToken]{S: oauthflow.NewMemoryStore(), C: tokenConv()}
}

// NewFileTokenStore returns a TokenStore that keeps tokens in one JSON file
// at path, readable only by the user (mode 0600, directory 0700). Each
// save reads the file, changes one entry and replaces the file atomically,
// under a lock on path+".lock" (on Unix; a save gives up when its context
// ends while another process holds the lock), so stores in several
// goroutines or processes do not lose each other's tokens. A file that is
// not valid JSON is moved aside to path+".corrupt" on the next save; any
// other read error is returned. The store is a TokenUpdater: processes
// sharing the file refresh a token one at a time under the same lock, and
// one takes the token another refreshed.
func NewFileTokenStore(path string) TokenStore {
	return oauthflow.OutwardUpdater[StoredToken]{Outward: oauthflow.Outward[StoredToken]{S: oauthflow.NewFileStore(path), C: tokenConv()}}
}

// DefaultTokenFile is where the CLI keeps tokens:
// $XDG_CONFIG_HOME/mcpadapter/tokens.json (or the OS's equivalent).
func DefaultTokenFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the token file: %w", err)
	}
	return filepath.Join(dir, "mcpadapter", "tokens.json"), nil
}

// tokenConv converts between StoredToken and oauthflow.StoredToken, which
// have the same fields, field for field, so a pointer to one converts to
// the other (and stops compiling if they drift apart).
func tokenConv() oauthflow.Conv[StoredToken] {
	return oauthflow.Conv[StoredToken]{
		To:   func(t *StoredToken) *oauthflow.StoredToken { return (*oauthflow.StoredToken)(t) },
		From: func(t *oauthflow.StoredToken) *StoredToken { return (*StoredToken)(t) },
	}
}

// flowStore returns s as oauthflow's Store: nil (oauthflow keeps tokens in
// memory) for nil, the store itself for one of oauthflow's.
func flowStore(s TokenStore) oauthflow.Store { return oauthflow.Inward[StoredToken](s, tokenConv()) }
