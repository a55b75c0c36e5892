package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// TokenExchange configures a token exchange (RFC 8693) at one
// authorization server: a user's access token (the subject token, of type
// urn:ietf:params:oauth:token-type:access_token) is exchanged for a token
// for an MCP server, so that a service acting for many users (a gateway)
// sends each server a token of the user's own, issued for that server,
// and never the token the user presented to the service. See
// NewTokenExchanger.
type TokenExchange struct {
	// Issuer is the authorization server (its issuer identifier, an https
	// URL; http only on a loopback host) whose token endpoint, from its
	// metadata (RFC 8414), makes the exchange: the only one the subject
	// tokens and ClientSecret are sent to. An authorization server an MCP
	// server names is never asked. Required.
	Issuer string
	// ClientID and ClientSecret authenticate the service at Issuer (HTTP
	// Basic; without a secret, client_id in the form). ClientID is
	// required.
	ClientID, ClientSecret string
	// Audience, if set, is the exchange's audience parameter (the logical
	// name of the MCP server at Issuer).
	Audience string
	// Resource is the exchange's resource indicator (RFC 8707): the MCP
	// server's URL. Required.
	Resource string
	// Scopes are asked for, if any.
	Scopes []string
	// HTTPClient sends the requests to Issuer; nil means a plain client.
	HTTPClient *http.Client
}

// TokenExchanger makes the exchanges of a TokenExchange. It is safe for
// concurrent use; it fetches Issuer's metadata once (again after a
// failure) and remembers no token.
type TokenExchanger struct {
	cfg TokenExchange
	hc  *http.Client

	mu   sync.Mutex
	meta *oauthex.AuthServerMeta
}

// NewTokenExchanger returns the exchanger of cfg, or an error naming the
// setting that cannot work.
func NewTokenExchanger(cfg *TokenExchange) (*TokenExchanger, error) {
	if cfg == nil {
		return nil, errors.New("mcpadapter: NewTokenExchanger: nil TokenExchange")
	}
	if err := oauthflow.CheckGrantIssuer("TokenExchange", cfg.Issuer); err != nil {
		return nil, fmt.Errorf("mcpadapter: NewTokenExchanger: %w", err)
	}
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("mcpadapter: NewTokenExchanger: TokenExchange.ClientID is empty")
	case cfg.Resource == "":
		return nil, errors.New("mcpadapter: NewTokenExchanger: TokenExchange.Resource is empty: name the MCP server's URL")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	c := *cfg
	c.Scopes = append([]string(nil), cfg.Scopes...)
	return &TokenExchanger{cfg: c, hc: oauthflow.NoPostRedirects(hc)}, nil
}

// ExchangeError reports an exchange that gave no token: Issuer refused it
// (Code is its OAuth error code, such as "invalid_grant") or could not be
// reached. It quotes no token and no secret.
type ExchangeError struct {
	// Issuer is the authorization server asked.
	Issuer string
	// Code is the OAuth error code Issuer answered with, if any.
	Code string
	// Err is the cause.
	Err error
}

func (e *ExchangeError) Error() string {
	return fmt.Sprintf("token exchange at %s: %v", e.Issuer, e.Err)
}

// Unwrap returns Err.
func (e *ExchangeError) Unwrap() error { return e.Err }

// Exchange exchanges subjectToken, an access token its user presented,
// for a token for Resource, and returns it (with its expiry, when Issuer
// says). A refusal is an *ExchangeError.
func (x *TokenExchanger) Exchange(ctx context.Context, subjectToken string) (*oauth2.Token, error) {
	t, err := x.target(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := oauthflow.ExchangeToken(ctx, x.hc, t, oauthflow.Exchange{
		SubjectToken: subjectToken, SubjectTokenType: oauthflow.TokenTypeAccessToken,
		RequestedTokenType: oauthflow.TokenTypeAccessToken, Audience: x.cfg.Audience,
	}, x.clientAuth())
	if err != nil {
		return nil, x.fail(err)
	}
	if err := checkIssuedToken(tok.AccessToken); err != nil {
		return nil, &ExchangeError{Issuer: x.cfg.Issuer, Err: err}
	}
	return tok, nil
}

// MaxExchangedToken bounds the size of a token TokenExchanger accepts
// from the issuer: it goes in an HTTP header with every request, and a
// gateway keeps thousands.
const MaxExchangedToken = 16 << 10

// checkIssuedToken refuses a token an Authorization header cannot carry
// as a bearer token (RFC 6750 b64token), or one over MaxExchangedToken
// bytes. The error does not quote it.
func checkIssuedToken(tok string) error {
	if len(tok) > MaxExchangedToken {
		return fmt.Errorf("the issuer's token is %d bytes, over the %d accepted", len(tok), MaxExchangedToken)
	}
	body := strings.TrimRight(tok, "=")
	if body == "" {
		return errors.New("the issuer's token is empty")
	}
	for _, r := range body {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-._~+/", r)) {
			return errors.New("the issuer's token holds a character a bearer token may not (RFC 6750 b64token)")
		}
	}
	return nil
}

// ClientToken returns a token for the service itself (the client
// credentials grant) for Resource: what a gateway lists a server with,
// for no user. A refusal is an *ExchangeError.
func (x *TokenExchanger) ClientToken(ctx context.Context) (*oauth2.Token, error) {
	t, err := x.target(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := oauthflow.ClientCredentialsGrant(x.clientAuth())(ctx, x.hc, t)
	if err != nil {
		return nil, x.fail(err)
	}
	if err := checkIssuedToken(tok.AccessToken); err != nil {
		return nil, &ExchangeError{Issuer: x.cfg.Issuer, Err: err}
	}
	return tok, nil
}

func (x *TokenExchanger) clientAuth() oauthflow.ClientAuth {
	return oauthflow.ClientAuth{ClientID: x.cfg.ClientID, ClientSecret: x.cfg.ClientSecret}
}

// target returns the exchanges' target: Issuer's metadata, Resource and
// Scopes.
func (x *TokenExchanger) target(ctx context.Context) (oauthflow.Target, error) {
	x.mu.Lock()
	meta := x.meta
	x.mu.Unlock()
	if meta == nil {
		m, err := oauthflow.FetchServerMetadata(ctx, x.hc, x.cfg.Issuer)
		switch {
		case err != nil:
			return oauthflow.Target{}, &ExchangeError{Issuer: x.cfg.Issuer, Err: fmt.Errorf("its metadata: %w", err)}
		case m == nil || m.TokenEndpoint == "":
			return oauthflow.Target{}, &ExchangeError{Issuer: x.cfg.Issuer, Err: errors.New("its metadata names no token endpoint")}
		}
		x.mu.Lock()
		x.meta, meta = m, m
		x.mu.Unlock()
	}
	return oauthflow.Target{AS: meta, Resource: x.cfg.Resource, Scopes: x.cfg.Scopes}, nil
}

// fail wraps err, an exchange's or grant's failure.
func (x *TokenExchanger) fail(err error) error {
	e := &ExchangeError{Issuer: x.cfg.Issuer, Err: err}
	var te *oauthflow.TokenError
	if errors.As(err, &te) {
		e.Code = te.Code
	}
	return e
}
