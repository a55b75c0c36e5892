package oauthflow

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// DefaultTimeout bounds the wait for the user to sign in when
// Config.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// Config is what a Handler needs: the client's registration with the
// authorization server, the redirect, how to reach the user, where tokens
// are kept, and for which MCP server.
type Config struct {
	// ClientID and ClientSecret identify a client registered in advance
	// with the authorization server Issuer (which alone is sent them).
	// An empty ClientID means dynamic client registration, or
	// ClientIDMetadataURL when the server supports it.
	ClientID     string
	ClientSecret string
	Issuer       string
	// ClientIDMetadataURL is an https URL of a client ID metadata document.
	ClientIDMetadataURL string
	// ClientName is the client_name sent with dynamic registration; empty
	// means "mcpadapter".
	ClientName string
	// Scopes are asked for in addition to those the server names.
	Scopes []string

	// RedirectURL is the loopback URL the redirect is served on (see
	// CheckRedirectURL); empty means 127.0.0.1 on a free port, path
	// /callback.
	RedirectURL string
	// OpenURL sends the user to the authorization page; it must not wait
	// for the user. Nil means the URL is logged at warn level.
	OpenURL func(ctx context.Context, authURL string) error
	// Timeout bounds the wait for the user to finish signing in; zero
	// means DefaultTimeout.
	Timeout time.Duration

	// Resource is the MCP server's URL: the key of its tokens in Store.
	Resource string
	// Store keeps tokens between runs; nil means in memory, for the life
	// of the Handler.
	Store Store
	// HTTPClient sends the requests to the authorization server
	// (metadata, registration, token); nil means http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives the flow's logs; nil means none.
	Logger *slog.Logger
	// DPoP, if set, is the client's DPoP key: a stored token bound to it
	// is sent as DPoP, and a token issued bound to it is stored with the
	// key's thumbprint. HTTPClient must prove its token requests with it
	// (DPoP.TokenTransport).
	DPoP *DPoP
}

// timeout is the wait for the user.
func (c *Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}
