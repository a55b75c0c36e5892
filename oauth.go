package mcpadapter

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"golang.org/x/oauth2"
)

// OAuth is the MCP authorization flow as an Auth: protected-resource and
// authorization-server metadata discovery, client registration (a
// preregistered client, a client ID metadata document, or dynamic client
// registration), the authorization code grant with PKCE, token refresh and
// scope step-up. The protocol is go-sdk's auth package; OAuth adds what an
// application needs around it: a loopback redirect served by the client
// while the user signs in, a way to send the user to the authorization page,
// and a token store so a signed-in user stays signed in.
//
// The zero value works: it registers dynamically, serves the redirect on
// 127.0.0.1, logs the authorization URL (set OpenURL to do better), and
// keeps tokens in memory. An OAuth value may be shared by several clients;
// each keeps its own tokens under its server's URL. It applies to HTTP
// targets, streamable and SSE.
type OAuth struct {
	// ClientID and ClientSecret identify a client registered with the
	// authorization server in advance. Empty means dynamic client
	// registration (or ClientIDMetadataURL, when the server supports it).
	ClientID     string
	ClientSecret string
	// Issuer, with ClientID, is the authorization server the client is
	// registered with: the flow stops rather than send the client's
	// credentials to any other. Required with ClientSecret: a secret
	// without an issuer is refused, since the authorization server comes
	// from the MCP server's metadata, which a malicious server chooses.
	// The authorization server the server names first must be this one.
	Issuer string
	// ClientIDMetadataURL is an https URL of a client ID metadata document,
	// used when the authorization server supports them.
	ClientIDMetadataURL string
	// ClientName is the client_name sent with dynamic registration; empty
	// means "mcpadapter".
	ClientName string
	// Scopes are requested in addition to those the server asks for.
	Scopes []string

	// RedirectURL is where the authorization server sends the user back. It
	// must be a loopback http URL (http://127.0.0.1:PORT/PATH or
	// http://localhost:PORT/PATH), which the client serves only while it
	// waits for the user. Empty means http://127.0.0.1 on a free port,
	// path /callback. For any other redirect, give go-sdk's handler to
	// ClientOptions.OAuthHandler instead.
	RedirectURL string
	// OpenURL sends the user to the authorization page: print it, open a
	// browser, send it to a chat. It must not wait for the user. Nil means
	// the URL is logged at warn level on ClientOptions.Logger.
	OpenURL func(ctx context.Context, authURL string) error
	// Timeout bounds the wait for the user to finish signing in; zero means
	// 5 minutes. This wait does not count against ConnectTimeout.
	Timeout time.Duration

	// Store keeps tokens between runs; nil means in memory, for the life of
	// the Client. See NewFileTokenStore.
	Store TokenStore
	// HTTPClient sends the requests to the authorization server (metadata,
	// registration, token); nil means ClientOptions.HTTPClient without the
	// client's Headers and Auth, or a plain client. Unless its transport
	// dials on its own (a RoundTripper other than *http.Transport, or one
	// with DialContext or a proxy), it refuses to connect to private,
	// link-local and other non-public addresses a server names, as
	// go-sdk's discovery does; the MCP server's and Issuer's hosts are
	// exempt, loopback is allowed.
	HTTPClient *http.Client
	// DPoPKey, if set, binds tokens to this key (DPoP, RFC 9449): a proof
	// with each token request and, for a token issued as DPoP, with each
	// request to the server. See NewDPoPKey and ClientCredentials.
	// Processes sharing a Store need the same key: a public client's
	// tokens, refresh tokens included, work only with the key they were
	// issued to.
	DPoPKey crypto.Signer
}

// wrap leaves requests alone: OAuth tokens are set by go-sdk's streamable
// transport, from the handler the Client builds (see Client.oauth).
func (*OAuth) wrap(next http.RoundTripper) http.RoundTripper { return next }

// check reports settings that cannot work, before anything is sent.
func (o *OAuth) check() error {
	return oauthflow.CheckOAuth(oauthflow.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Issuer: o.Issuer,
		RedirectURL: o.RedirectURL, Timeout: o.Timeout}, o.DPoPKey)
}

// AuthorizationError is a failure of the OAuth flow: discovery,
// registration, the user's consent, or the token exchange.
type AuthorizationError struct {
	Server string // the server's name
	Err    error
}

// Error says which server and why, without secrets.
func (e *AuthorizationError) Error() string {
	return fmt.Sprintf("authorizing with %s: %s", e.Server, wire.RedactURLSecrets(e.Err.Error()))
}

// Unwrap returns Err.
func (e *AuthorizationError) Unwrap() error { return e.Err }

// ownAuthError reports whether err is a failed sign-in
// (*AuthorizationError) or one to make (*SignInRequiredError): a server's
// refusal of the connect returns it as it is (engine.AuthRefusal).
func ownAuthError(err error) bool {
	var ae *AuthorizationError
	var sr *SignInRequiredError
	return errors.As(err, &ae) || errors.As(err, &sr)
}

// refusedBy returns the error of a failed sign-in with the server named
// server: an *AuthorizationError.
func refusedBy(server string) func(error) error {
	return func(err error) error { return &AuthorizationError{Server: server, Err: err} }
}

// newOAuthHandler returns the handler of the client named server, whose
// MCP endpoint is resource (the token store key). hc sends the requests to
// the authorization server unless o.HTTPClient is set.
func newOAuthHandler(o *OAuth, server, resource string, hc *http.Client, log *slog.Logger) *oauthflow.Bound {
	if o.HTTPClient != nil {
		hc = o.HTTPClient
	}
	dpop, hc := oauthflow.AuthServerClient(hc, o.DPoPKey, oauthflow.HostOf(resource), oauthflow.HostOf(o.Issuer))
	return &oauthflow.Bound{DPoP: dpop, Refused: refusedBy(server), Flow: oauthflow.NewHandler(oauthflow.Config{
		ClientID:            o.ClientID,
		ClientSecret:        o.ClientSecret,
		Issuer:              o.Issuer,
		ClientIDMetadataURL: o.ClientIDMetadataURL,
		ClientName:          o.ClientName,
		Scopes:              o.Scopes,
		RedirectURL:         o.RedirectURL,
		OpenURL:             o.OpenURL,
		Timeout:             o.Timeout,
		Resource:            resource,
		Store:               flowStore(o.Store),
		HTTPClient:          hc,
		Logger:              log,
		DPoP:                dpop,
	})}
}

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
