package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ExchangerConfig is the setting of an Exchanger: field for field the
// public TokenExchange, which converts to it.
type ExchangerConfig struct {
	Issuer                 string
	ClientID, ClientSecret string
	Audience               string
	Resource               string
	Scopes                 []string
	HTTPClient             *http.Client
}

// Exchanger makes token exchanges (RFC 8693) and client credentials
// grants at one issuer set in advance. It is safe for concurrent use; it
// fetches the issuer's metadata once (again after a failure) and
// remembers no token.
type Exchanger struct {
	cfg ExchangerConfig
	hc  *http.Client

	mu   sync.Mutex
	meta *oauthex.AuthServerMeta
}

// NewExchanger returns the exchanger of cfg, or an error naming the
// setting (what.Field) that cannot work.
func NewExchanger(what string, cfg ExchangerConfig) (*Exchanger, error) {
	if err := CheckGrantIssuer(what, cfg.Issuer); err != nil {
		return nil, err
	}
	switch {
	case cfg.ClientID == "":
		return nil, fmt.Errorf("%s.ClientID is empty", what)
	case cfg.Resource == "":
		return nil, fmt.Errorf("%s.Resource is empty: name the MCP server's URL", what)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	cfg.Scopes = append([]string(nil), cfg.Scopes...)
	return &Exchanger{cfg: cfg, hc: NoPostRedirects(hc)}, nil
}

// ExchangeError reports an exchange or grant that gave no token: the
// issuer refused it (Code is its OAuth error code, such as
// "invalid_grant") or could not be reached. It quotes no token and no
// secret.
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

// MaxExchangedToken bounds the size of a token an Exchanger accepts from
// the issuer: it goes in an HTTP header with every request, and a
// gateway keeps thousands.
const MaxExchangedToken = 16 << 10

// Exchange exchanges subjectToken, an access token its user presented,
// for a token for the configured resource. A refusal is an
// *ExchangeError.
func (x *Exchanger) Exchange(ctx context.Context, subjectToken string) (*oauth2.Token, error) {
	return x.grant(ctx, func(ctx context.Context, t Target) (*oauth2.Token, error) {
		return ExchangeToken(ctx, x.hc, t, Exchange{
			SubjectToken: subjectToken, SubjectTokenType: TokenTypeAccessToken,
			RequestedTokenType: TokenTypeAccessToken, Audience: x.cfg.Audience,
		}, x.clientAuth())
	})
}

// ClientToken returns a token for the service itself (the client
// credentials grant) for the configured resource. A refusal is an
// *ExchangeError.
func (x *Exchanger) ClientToken(ctx context.Context) (*oauth2.Token, error) {
	return x.grant(ctx, func(ctx context.Context, t Target) (*oauth2.Token, error) {
		return ClientCredentialsGrant(x.clientAuth())(ctx, x.hc, t)
	})
}

// grant gets a token with get at the issuer and checks it.
func (x *Exchanger) grant(ctx context.Context, get func(context.Context, Target) (*oauth2.Token, error)) (*oauth2.Token, error) {
	t, err := x.target(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := get(ctx, t)
	if err != nil {
		e := &ExchangeError{Issuer: x.cfg.Issuer, Err: err}
		var te *TokenError
		if errors.As(err, &te) {
			e.Code = te.Code
		}
		return nil, e
	}
	if err := checkIssuedToken(tok.AccessToken); err != nil {
		return nil, &ExchangeError{Issuer: x.cfg.Issuer, Err: err}
	}
	return tok, nil
}

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

func (x *Exchanger) clientAuth() ClientAuth {
	return ClientAuth{ClientID: x.cfg.ClientID, ClientSecret: x.cfg.ClientSecret}
}

// target returns the exchanges' target: the issuer's metadata, the
// resource and the scopes.
func (x *Exchanger) target(ctx context.Context) (Target, error) {
	x.mu.Lock()
	meta := x.meta
	x.mu.Unlock()
	if meta == nil {
		m, err := FetchServerMetadata(ctx, x.hc, x.cfg.Issuer)
		switch {
		case err != nil:
			return Target{}, &ExchangeError{Issuer: x.cfg.Issuer, Err: fmt.Errorf("its metadata: %w", err)}
		case m == nil || m.TokenEndpoint == "":
			return Target{}, &ExchangeError{Issuer: x.cfg.Issuer, Err: errors.New("its metadata names no token endpoint")}
		}
		x.mu.Lock()
		x.meta, meta = m, m
		x.mu.Unlock()
	}
	return Target{AS: meta, Resource: x.cfg.Resource, Scopes: x.cfg.Scopes}, nil
}
