package mcpadapter

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// WebSignIn is the MCP authorization flow for a web service with many
// users, as an Auth: one Client (and every replica's) holds a token for
// each principal (CallIdentity.Principal) and sends each request with its
// principal's token only. A principal with no token, or whose token the
// server refuses, gets a *SignInRequiredError at once, carrying the
// authorization URL to send that user to; the authorization server sends
// the browser back to the service's own RedirectURL, whose handler
// authenticates its user and calls Complete. The sign-in's state is
// sealed with StateKey and carries the principal, the server and the PKCE
// verifier, so a sign-in started on one replica completes on any other
// that has the same StateKey and Store.
//
// One WebSignIn may serve several Clients (a Group): each server's tokens
// are kept under its URL. Make it with NewWebSignIn.
type WebSignIn struct {
	flow *oauthflow.Web
}

// WebSignInOptions configures a WebSignIn.
type WebSignInOptions struct {
	// Issuer is the authorization server the client is registered with
	// (an https URL; http only on a loopback host). Required: the client
	// secret and the authorization codes go there and nowhere else, and
	// a server whose metadata names another authorization server gets no
	// sign-in.
	Issuer string
	// ClientID is the service's client, registered with Issuer, with
	// RedirectURL among its redirect URIs. Required.
	ClientID string
	// ClientSecret authenticates the client at Issuer's token endpoint;
	// empty for a public client (PKCE alone).
	ClientSecret string
	// Scopes are asked for in addition to those the server names.
	Scopes []string
	// RedirectURL is the service's callback (https; http only on a
	// loopback host): its handler calls Complete.
	RedirectURL string
	// StateKey seals the state of each sign-in (AES-GCM; 16, 24 or 32
	// random bytes). Give every replica the same key; keep it secret. A
	// state sealed with another key, or for another Issuer, ClientID or
	// RedirectURL, altered, or older than StateTTL is refused.
	StateKey []byte
	// StateTTL bounds the time from the sign-in URL to the callback; zero
	// means 10 minutes.
	StateTTL time.Duration
	// Store keeps the tokens, under TokenKey(server URL, principal); nil
	// means in memory. Replicas share one (redisstore, pgstore): a
	// sign-in completed on one is used by all, and a TokenUpdater
	// refreshes each token under its lock, so a rotated refresh token is
	// used once. Complete also keeps there, under another key per
	// principal and server, the states used and not yet expired: a state
	// is used once, on any replica. A token the store cannot open (a
	// redisstore or pgstore token sealed with another key, after the
	// store's key changed) counts as none: its principal signs in again.
	Store TokenStore
	// HTTPClient sends the requests to the authorization server and for
	// the server's metadata; nil means a plain client. Unless its
	// transport dials on its own, it refuses private and link-local
	// addresses a server names (as OAuth.HTTPClient).
	HTTPClient *http.Client
	// Logger receives the flow's logs; nil means none.
	Logger *slog.Logger
	// DPoPKey, if set, binds the tokens to this key (DPoP, RFC 9449): a
	// proof with each token request and, for a token issued bound, with
	// each request to the server. See NewDPoPKey. Replicas sharing Store
	// need the same key: a token bound to another key is not sent (its
	// principal signs in again).
	DPoPKey crypto.Signer
	// Unattended, if set, gives the bearer token of the requests made
	// with no CallIdentity (principal ""), which then need no sign-in: a
	// service's own requests, such as a gateway's listings made with a
	// client credentials token of its own. Nil: principal "" signs in as
	// any other.
	Unattended func(ctx context.Context) (string, error)
}

// NewWebSignIn returns a WebSignIn, or an error naming a setting that
// cannot work.
func NewWebSignIn(opts *WebSignInOptions) (*WebSignIn, error) {
	if opts == nil {
		opts = &WebSignInOptions{}
	}
	cfg := oauthflow.WebConfig{
		ClientID: opts.ClientID, ClientSecret: opts.ClientSecret, Issuer: opts.Issuer, Scopes: opts.Scopes,
		RedirectURL: opts.RedirectURL, StateKey: opts.StateKey, StateTTL: opts.StateTTL,
		Store: flowStore(opts.Store), HTTPClient: opts.HTTPClient, Logger: opts.Logger, Principal: principalOf,
		DPoPKey: opts.DPoPKey, Unattended: opts.Unattended,
	}
	if err := oauthflow.CheckWeb("WebSignInOptions", cfg); err != nil {
		return nil, fmt.Errorf("mcpadapter: NewWebSignIn: %w", err)
	}
	w, err := oauthflow.NewWeb(cfg)
	if err != nil {
		return nil, fmt.Errorf("mcpadapter: NewWebSignIn: %w", err)
	}
	return &WebSignIn{flow: w}, nil
}

// wrap leaves requests alone: the Client adds the principal's token (see
// Client.wrapHTTP), knowing its server's URL.
func (*WebSignIn) wrap(next http.RoundTripper) http.RoundTripper { return next }

// target returns s for the client named server whose endpoint is
// resource.
func (s *WebSignIn) target(server, resource string) *oauthflow.WebTarget {
	t := s.flow.Target(resource)
	t.Required = func(n *oauthflow.NeedSignIn) error {
		return &SignInRequiredError{Server: server, Principal: n.Principal, URL: n.URL}
	}
	t.Refused = refusedBy(server)
	return t
}

// Complete ends the sign-in of principal, the user the application has
// authenticated on the callback request, whose query (the request's
// URL.Query()) the authorization server sent: the state must be one this
// service sealed for that principal, not expired and not used before, on
// any replica; the code is exchanged at Issuer's token endpoint, and the
// token stored for principal and the server the sign-in was for. A state
// minted for another principal completes nothing: a user cannot be signed
// in with someone else's account by a link. The error says why without
// secrets; show the user a page to start again. principal must be the
// user the application authenticated on this request: a browser it has
// not authenticated completes no one's sign-in (not even principal "",
// the calls made with no CallIdentity).
func (s *WebSignIn) Complete(ctx context.Context, principal string, query url.Values) error {
	if s == nil || s.flow == nil {
		return errors.New("mcpadapter: Complete on a WebSignIn not made by NewWebSignIn")
	}
	if _, err := s.flow.Complete(ctx, principal, query); err != nil {
		return fmt.Errorf("mcpadapter: completing the sign-in of %q: %w", principal, err)
	}
	return nil
}

// TokenVersion returns an opaque version of the token stored for
// principal at the MCP server at resource (the server's URL, as given to
// the Client): "" when there is none, or none this WebSignIn can use.
// It reads the store (every replica's sign-ins), not this process's
// copies, and changes when a sign-in stores a new token: a service that
// sent a user to sign in compares it with the version it saw before to
// learn that the sign-in completed, wherever it did. The version is a
// hash and reveals nothing of the token.
func (s *WebSignIn) TokenVersion(ctx context.Context, resource, principal string) (string, error) {
	if s == nil || s.flow == nil {
		return "", errors.New("mcpadapter: TokenVersion on a WebSignIn not made by NewWebSignIn")
	}
	v, err := s.flow.TokenVersion(ctx, TokenKey(resource, principal))
	if err != nil {
		return "", fmt.Errorf("mcpadapter: the stored token of %q: %w", principal, err)
	}
	return v, nil
}

// Close ends the background saves of refreshed tokens the store could not
// take, after one last try each, and waits for them. Call it when the
// service stops; the WebSignIn stays usable.
func (s *WebSignIn) Close() {
	if s != nil && s.flow != nil {
		s.flow.Close()
	}
}

// TokenKey returns the key of principal's token for the MCP server at
// resource in a TokenStore: resource itself for the principal "" (the key
// OAuth uses), else resource, a line feed, "principal=" and the principal
// query-escaped. No two (resource, principal) pairs share a key: a URL
// holds no line feed.
func TokenKey(resource, principal string) string { return oauthflow.TokenKey(resource, principal) }

// SignInRequiredError reports that a request's principal has no token the
// server takes (never signed in, or the token was refused or cannot be
// refreshed). Send the user to URL: the authorization server's page, for
// this principal and server only (a link not to show to anyone else, and
// kept out of Error's text). The request was not made; make it again
// once Complete has run.
type SignInRequiredError struct {
	// Server is the server's name.
	Server string
	// Principal is the request's principal ("" for none).
	Principal string
	// URL is the authorization URL to send the user to.
	URL string
}

// Error names the server and the principal.
func (e *SignInRequiredError) Error() string {
	return fmt.Sprintf("mcpadapter: %s: principal %q must sign in (send them to SignInRequiredError.URL)", e.Server, e.Principal)
}

// SignInKey is the key of the question a tool call in ElicitInterrupt mode
// asks when its principal must sign in (see signInQuestion).
const SignInKey = "mcpadapter-sign-in"

// signInQuestion turns err, the error of the tool call tc in
// ElicitInterrupt mode, into a question when its principal must sign in
// (*SignInRequiredError): an *InputRequiredError whose one request, keyed
// SignInKey, sends the user to the sign-in URL (URL mode), and whose
// resume, once the user accepts (after the callback), makes the call
// again (accepted before the callback, it asks again, with a new URL).
// Any other error is returned as it is.
func (c *Client) signInQuestion(tc *toolCall, err error) error {
	var sr *SignInRequiredError
	if !errors.As(err, &sr) {
		return err
	}
	p := c.pendingFor(tc, 0)
	p.Retry = true
	p.Requests = []elicitation.Request{{Key: SignInKey, Mode: elicitation.ModeURL, URL: sr.URL,
		Message: fmt.Sprintf("Sign in to %s so that the agent can use it for you.", sr.Server)}}
	return &InputRequiredError{Pending: p}
}
