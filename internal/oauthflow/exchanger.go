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
	// IDJAG, if set, makes the exchange the ID-JAG flow's (see
	// exchanger_idjag.go).
	IDJAG *IDJAGConfig
}

// IDJAGConfig is the second half of an Exchanger's ID-JAG flow: the MCP
// server's authorization server, and the service's client there. An
// empty ClientID means the ExchangerConfig's.
type IDJAGConfig struct {
	AuthorizationServer    string
	ClientID, ClientSecret string
}

// Exchanger makes token exchanges (RFC 8693), or the ID-JAG flow, and
// client credentials grants at the issuers set in advance. It is safe for
// concurrent use; it fetches the issuers' metadata once (again after a
// failure) and remembers no token.
type Exchanger struct {
	cfg ExchangerConfig
	hc  *http.Client

	mu   sync.Mutex
	meta *oauthex.AuthServerMeta
	idj  idjagState // the ID-JAG flow's (exchanger_idjag.go)
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
	if err := checkIDJAGExchange(what, cfg); err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	cfg.Scopes = append([]string(nil), cfg.Scopes...)
	if cfg.IDJAG != nil {
		j := *cfg.IDJAG
		if j.ClientID == "" {
			j.ClientID = cfg.ClientID
		}
		cfg.IDJAG = &j
	}
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
	if x.cfg.IDJAG != nil {
		return x.exchangeIDJAG(ctx, subjectToken)
	}
	t, err := x.target(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := ExchangeToken(ctx, x.hc, t, Exchange{
		SubjectToken: subjectToken, SubjectTokenType: TokenTypeAccessToken,
		RequestedTokenType: TokenTypeAccessToken, Audience: x.cfg.Audience,
	}, x.clientAuth())
	return issued(x.cfg.Issuer, tok, err)
}

// ClientToken returns a token for the service itself (the client
// credentials grant) for the configured resource, made at the issuer, or
// with the ID-JAG flow at its authorization server. A refusal is an
// *ExchangeError.
func (x *Exchanger) ClientToken(ctx context.Context) (*oauth2.Token, error) {
	issuer, ca, t, err := x.clientTarget(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := ClientCredentialsGrant(ca)(ctx, x.hc, t)
	return issued(issuer, tok, err)
}

// clientTarget returns where ClientToken asks: the issuer, the service's
// client there, and the target.
func (x *Exchanger) clientTarget(ctx context.Context) (string, ClientAuth, Target, error) {
	if j := x.cfg.IDJAG; j != nil {
		t, err := x.authServerTarget(ctx)
		return j.AuthorizationServer, x.asClientAuth(), t, err
	}
	t, err := x.target(ctx)
	return x.cfg.Issuer, x.clientAuth(), t, err
}

// issued returns tok, the answer of issuer, once checked, or err, the
// failure of its grant, as an *ExchangeError.
func issued(issuer string, tok *oauth2.Token, err error) (*oauth2.Token, error) {
	if err != nil {
		e := &ExchangeError{Issuer: issuer, Err: err}
		var te *TokenError
		if errors.As(err, &te) {
			e.Code = te.Code
		}
		return nil, e
	}
	if err := checkIssuedToken(tok.AccessToken); err != nil {
		return nil, &ExchangeError{Issuer: issuer, Err: err}
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
	meta, err := x.metadata(ctx, x.cfg.Issuer, &x.meta)
	if err != nil {
		return Target{}, err
	}
	return Target{AS: meta, Resource: x.cfg.Resource, Scopes: x.cfg.Scopes}, nil
}

// metadata returns the metadata of issuer, kept in *kept (under x.mu)
// once fetched.
func (x *Exchanger) metadata(ctx context.Context, issuer string, kept **oauthex.AuthServerMeta) (*oauthex.AuthServerMeta, error) {
	x.mu.Lock()
	meta := *kept
	x.mu.Unlock()
	if meta != nil {
		return meta, nil
	}
	m, err := FetchServerMetadata(ctx, x.hc, issuer)
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
