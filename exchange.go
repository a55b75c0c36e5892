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
	// HTTPClient sends the requests to Issuer (and to IDJAG's
	// authorization server); nil means a plain client.
	HTTPClient *http.Client
	// IDJAG, if set, makes the exchange enterprise-managed authorization's
	// (the ID-JAG flow EnterpriseAuth speaks, for a service): Issuer is
	// then the identity provider, which exchanges the subject token for an
	// identity assertion JWT authorization grant (ID-JAG) naming
	// IDJAG.AuthorizationServer and Resource, and the ID-JAG, once checked
	// to be for them, is presented there in a JWT bearer grant (RFC 7523)
	// for the token. Audience must then be empty (the ID-JAG's audience is
	// the authorization server).
	IDJAG *IDJAGExchange
}

// IDJAGExchange is the second half of a TokenExchange's ID-JAG flow: the
// MCP server's authorization server, and the service's client there.
type IDJAGExchange struct {
	// AuthorizationServer is the MCP server's authorization server (its
	// issuer identifier, an https URL; http only on a loopback host),
	// which trusts the identity provider: the only one the ID-JAG and
	// ClientSecret are sent to. An MCP server whose protected resource
	// metadata (RFC 9728) names another is refused before anything is
	// sent. Required.
	AuthorizationServer string
	// ClientID and ClientSecret authenticate the service at
	// AuthorizationServer (HTTP Basic; without a secret, client_id in the
	// form). An empty ClientID means TokenExchange.ClientID; the secret
	// has no default (TokenExchange.ClientSecret is the identity
	// provider's and goes to no other).
	ClientID, ClientSecret string
}

// TokenExchanger makes the exchanges of a TokenExchange. It is safe for
// concurrent use; it fetches Issuer's metadata once (again after a
// failure) and remembers no token.
type TokenExchanger struct {
	cfg TokenExchange
	hc  *http.Client

	mu   sync.Mutex
	meta *oauthex.AuthServerMeta
	idj  idjagState // the ID-JAG flow's (exchange_idjag.go)
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
	if err := checkIDJAGExchange(cfg); err != nil {
		return nil, fmt.Errorf("mcpadapter: NewTokenExchanger: %w", err)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	c := *cfg
	c.Scopes = append([]string(nil), cfg.Scopes...)
	if cfg.IDJAG != nil {
		j := *cfg.IDJAG
		if j.ClientID == "" {
			j.ClientID = cfg.ClientID
		}
		c.IDJAG = &j
	}
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
	if x.cfg.IDJAG != nil {
		return x.exchangeIDJAG(ctx, subjectToken)
	}
	t, err := x.target(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := oauthflow.ExchangeToken(ctx, x.hc, t, oauthflow.Exchange{
		SubjectToken: subjectToken, SubjectTokenType: oauthflow.TokenTypeAccessToken,
		RequestedTokenType: oauthflow.TokenTypeAccessToken, Audience: x.cfg.Audience,
	}, x.clientAuth())
	if err != nil {
		return nil, fail(x.cfg.Issuer, err)
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
// for no user. The grant is made at Issuer, or with IDJAG at its
// authorization server. A refusal is an *ExchangeError.
func (x *TokenExchanger) ClientToken(ctx context.Context) (*oauth2.Token, error) {
	issuer, ca, t, err := x.clientTarget(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := oauthflow.ClientCredentialsGrant(ca)(ctx, x.hc, t)
	if err != nil {
		return nil, fail(issuer, err)
	}
	if err := checkIssuedToken(tok.AccessToken); err != nil {
		return nil, &ExchangeError{Issuer: issuer, Err: err}
	}
	return tok, nil
}

// clientTarget returns where ClientToken asks: the issuer, the service's
// client there, and the target.
func (x *TokenExchanger) clientTarget(ctx context.Context) (string, oauthflow.ClientAuth, oauthflow.Target, error) {
	if j := x.cfg.IDJAG; j != nil {
		t, err := x.authServerTarget(ctx)
		return j.AuthorizationServer, x.asClientAuth(), t, err
	}
	t, err := x.target(ctx)
	return x.cfg.Issuer, x.clientAuth(), t, err
}

func (x *TokenExchanger) clientAuth() oauthflow.ClientAuth {
	return oauthflow.ClientAuth{ClientID: x.cfg.ClientID, ClientSecret: x.cfg.ClientSecret}
}

// target returns the exchanges' target: Issuer's metadata, Resource and
// Scopes.
func (x *TokenExchanger) target(ctx context.Context) (oauthflow.Target, error) {
	meta, err := x.metadata(ctx, x.cfg.Issuer, &x.meta)
	if err != nil {
		return oauthflow.Target{}, err
	}
	return oauthflow.Target{AS: meta, Resource: x.cfg.Resource, Scopes: x.cfg.Scopes}, nil
}

// metadata returns the metadata of issuer, kept in *kept (under x.mu)
// once fetched.
func (x *TokenExchanger) metadata(ctx context.Context, issuer string, kept **oauthex.AuthServerMeta) (*oauthex.AuthServerMeta, error) {
	x.mu.Lock()
	meta := *kept
	x.mu.Unlock()
	if meta != nil {
		return meta, nil
	}
	m, err := oauthflow.FetchServerMetadata(ctx, x.hc, issuer)
	switch {
	case err != nil:
		return nil, &ExchangeError{Issuer: issuer, Err: fmt.Errorf("its metadata: %w", err)}
	case m == nil || m.TokenEndpoint == "":
		return nil, &ExchangeError{Issuer: issuer, Err: errors.New("its metadata names no token endpoint")}
	}
	x.mu.Lock()
	*kept = m
	x.mu.Unlock()
	return m, nil
}

// fail wraps err, an exchange's or grant's failure at issuer.
func fail(issuer string, err error) error {
	e := &ExchangeError{Issuer: issuer, Err: err}
	var te *oauthflow.TokenError
	if errors.As(err, &te) {
		e.Code = te.Code
	}
	return e
}
