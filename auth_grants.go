package mcpadapter

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"golang.org/x/oauth2"
)

// The grants of the MCP authorization extensions that need no user:
// ClientCredentials (SEP-1046, with a secret or a private key JWT, RFC
// 7523), JWTBearer (workload identity federation, SEP-1933) and
// EnterpriseAuth (enterprise-managed authorization, SEP-990: an ID token
// exchanged for an ID-JAG, RFC 8693, then a JWT bearer grant). Each is an
// Auth: on the server's first 401 the client reads the protected resource
// metadata (RFC 9728) for the resource and scopes, fetches the metadata
// (RFC 8414) of the authorization server named by Issuer, gets a token
// there, and gets a new one when it expires.
//
// Issuer is required: a grant's secret, key assertion or workload token
// goes to that authorization server and to no other. A server whose
// metadata names another authorization server is refused before anything
// is sent (a malicious server cannot collect the credentials by naming
// its own), a JWT assertion whose aud is not that server is not sent, and
// the resource indicator (RFC 8707) is the MCP server's URL. A 403 runs
// the grant again only when it asks for more scopes (insufficient_scope),
// asking for those granted before as well.
//
// A grant the authorization server refuses fails the connect with an
// *AuthorizationError naming the server and the OAuth error code; it is
// not retried, nor replaced by another grant. Keys, secrets, assertions
// and DPoP proofs appear in no log, trace or error.
//
// DPoP (RFC 9449, SEP-1932) is opt-in: with DPoPKey set the client sends a
// proof with each token request and, when the token comes back bound
// (token_type DPoP), presents it as "Authorization: DPoP" with a fresh
// proof on every request, retrying once with the server's nonce when the
// authorization server or the MCP server asks for one (use_dpop_nonce).
// NewDPoPKey makes a key for the life of the process.

// ClientCredentials authorizes the client as itself (the client
// credentials grant): with ClientSecret (HTTP Basic) or, when PrivateKey
// is set, a signed JWT client assertion (private_key_jwt, RFC 7523
// section 2.2: iss and sub the client ID, aud the authorization server's
// issuer).
type ClientCredentials struct {
	// Issuer is the authorization server the client is registered with
	// (its issuer identifier, an https URL): the only one the client's
	// credentials are sent to. Required.
	Issuer       string
	ClientID     string
	ClientSecret string
	// PrivateKey signs the client assertion: ECDSA P-256 (ES256), P-384
	// (ES384) or RSA (RS256). See ParsePrivateKeyPEM.
	PrivateKey crypto.Signer
	// Scopes are asked for in addition to those the server names.
	Scopes []string
	// DPoPKey, if set, binds the tokens to this key (DPoP).
	DPoPKey crypto.Signer
	// HTTPClient sends the requests to the authorization server; nil
	// means ClientOptions.HTTPClient without the client's headers, or a
	// plain client.
	HTTPClient *http.Client
}

// JWTBearer authorizes with a JWT the workload already holds (workload
// identity federation: a Kubernetes service account token, a cloud
// identity token) as the assertion of a JWT bearer grant (RFC 7523
// section 2.1). ClientID is sent with the grant; ClientSecret, if set,
// authenticates the client with HTTP Basic. The JWT's aud must name
// Issuer (or its token endpoint); another is not sent.
type JWTBearer struct {
	// Issuer is the authorization server that accepts the workload's
	// tokens: the only one they are sent to. Required.
	Issuer string
	// Assertion returns the JWT; it is called for each token request, so
	// a token file that is rotated is read again. See AssertionFile.
	Assertion              func(ctx context.Context) (string, error)
	ClientID, ClientSecret string
	Scopes                 []string
	DPoPKey                crypto.Signer
	HTTPClient             *http.Client
}

// EnterpriseAuth is enterprise-managed authorization: the user's ID token
// from the enterprise identity provider (IdP) is exchanged at the IdP's
// token endpoint for an identity assertion JWT authorization grant
// (ID-JAG) naming the MCP authorization server and the MCP server, which
// the client presents there in a JWT bearer grant, authenticated as
// ClientID with ClientSecret. The ID token goes only to the IdP; the
// ID-JAG is asked for Issuer and the MCP server, checked to be for them,
// and presented only to Issuer.
type EnterpriseAuth struct {
	// Issuer is the MCP authorization server (which trusts the IdP): the
	// only one the ID-JAG and ClientSecret are sent to. Required.
	Issuer string
	// IDToken returns the user's ID token from the IdP (from a sign-in the
	// application did, a file, a command). See AssertionFile.
	IDToken func(ctx context.Context) (string, error)
	// IdPTokenURL is the IdP's token endpoint; empty means the one in the
	// metadata of IdPIssuer.
	IdPTokenURL, IdPIssuer string
	// IdPClientID and IdPClientSecret identify the client at the IdP
	// (HTTP Basic with a secret, client_id in the form without).
	IdPClientID, IdPClientSecret string
	// ClientID and ClientSecret identify the client at the MCP
	// authorization server.
	ClientID, ClientSecret string
	Scopes                 []string
	DPoPKey                crypto.Signer
	HTTPClient             *http.Client
}

// AssertionFile returns an assertion source that reads a JWT from path
// each time (surrounding white space removed), for tokens a platform
// writes and rotates.
func AssertionFile(path string) func(context.Context) (string, error) {
	return oauthflow.AssertionFile(path)
}

// ParsePrivateKeyPEM reads a PEM private key (PKCS #8, "EC PRIVATE KEY" or
// "RSA PRIVATE KEY") for ClientCredentials.PrivateKey or a DPoPKey. Its
// errors never quote the key.
func ParsePrivateKeyPEM(pemData []byte) (crypto.Signer, error) {
	return oauthflow.ParsePrivateKeyPEM(pemData)
}

// NewDPoPKey returns a new ECDSA P-256 key for DPoP.
func NewDPoPKey() (crypto.Signer, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// grantAuth is an Auth that runs a grant of its own (go-sdk's transport
// calls its handler on a 401).
type grantAuth interface {
	Auth
	check() error
	grant() grantParts
}

// grantParts are what a grant's handler is made of.
type grantParts struct {
	run     oauthflow.Grant
	issuer  string
	scopes  []string
	dpop    crypto.Signer
	hc      *http.Client
	trusted []string // hosts the user named besides the issuer's (an IdP's)
}

func (*ClientCredentials) wrap(next http.RoundTripper) http.RoundTripper { return next }
func (*JWTBearer) wrap(next http.RoundTripper) http.RoundTripper         { return next }
func (*EnterpriseAuth) wrap(next http.RoundTripper) http.RoundTripper    { return next }

func (c *ClientCredentials) check() error {
	return oauthflow.CheckClientCredentials(c.Issuer, c.clientAuth(), c.DPoPKey)
}

func (c *ClientCredentials) clientAuth() oauthflow.ClientAuth {
	return oauthflow.ClientAuth{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Key: c.PrivateKey}
}

func (c *ClientCredentials) grant() grantParts {
	return grantParts{run: oauthflow.ClientCredentialsGrant(c.clientAuth()), issuer: c.Issuer, scopes: c.Scopes, dpop: c.DPoPKey, hc: c.HTTPClient}
}

func (j *JWTBearer) check() error { return oauthflow.CheckJWTBearer(j.Issuer, j.Assertion, j.DPoPKey) }

func (j *JWTBearer) grant() grantParts {
	ca := oauthflow.ClientAuth{ClientID: j.ClientID, ClientSecret: j.ClientSecret}
	return grantParts{run: oauthflow.JWTBearerGrant(j.Assertion, ca), issuer: j.Issuer, scopes: j.Scopes, dpop: j.DPoPKey, hc: j.HTTPClient}
}

func (e *EnterpriseAuth) check() error {
	return oauthflow.CheckEnterprise(e.Issuer, e.flow(), e.DPoPKey)
}

func (e *EnterpriseAuth) flow() oauthflow.Enterprise {
	return oauthflow.Enterprise{
		IDToken:     e.IDToken,
		IdPTokenURL: e.IdPTokenURL,
		IdPIssuer:   e.IdPIssuer,
		IdP:         oauthflow.ClientAuth{ClientID: e.IdPClientID, ClientSecret: e.IdPClientSecret},
		Client:      oauthflow.ClientAuth{ClientID: e.ClientID, ClientSecret: e.ClientSecret},
	}
}

func (e *EnterpriseAuth) grant() grantParts {
	return grantParts{run: e.flow().Grant(), issuer: e.Issuer, scopes: e.Scopes, dpop: e.DPoPKey, hc: e.HTTPClient,
		trusted: []string{oauthflow.HostOf(e.IdPTokenURL), oauthflow.HostOf(e.IdPIssuer)}}
}

// newGrantHandler returns the handler of the client named server, whose
// MCP endpoint is resource, for a.
func newGrantHandler(a grantAuth, server, resource string, hc *http.Client, log *slog.Logger) *oauthflow.Bound {
	p := a.grant()
	g, scopes, key := p.run, p.scopes, p.dpop
	if p.hc != nil {
		hc = p.hc
	}
	h := &oauthflow.Bound{Refused: refusedBy(server)}
	h.DPoP, hc = oauthflow.AuthServerClient(hc, key, append(p.trusted, oauthflow.HostOf(resource), oauthflow.HostOf(p.issuer))...)
	h.Flow = oauthflow.NewGrantHandler(oauthflow.WithScopes(g, scopes), oauthflow.GrantConfig{Issuer: p.issuer, HTTPClient: hc, Logger: log})
	return h
}

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
type TokenExchanger struct{ x *oauthflow.Exchanger }

// NewTokenExchanger returns the exchanger of cfg, or an error naming the
// setting that cannot work.
func NewTokenExchanger(cfg *TokenExchange) (*TokenExchanger, error) {
	if cfg == nil {
		return nil, errors.New("mcpadapter: NewTokenExchanger: nil TokenExchange")
	}
	xc := oauthflow.ExchangerConfig{
		Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		Audience: cfg.Audience, Resource: cfg.Resource, Scopes: cfg.Scopes, HTTPClient: cfg.HTTPClient,
	}
	if j := cfg.IDJAG; j != nil {
		xc.IDJAG = &oauthflow.IDJAGConfig{AuthorizationServer: j.AuthorizationServer, ClientID: j.ClientID, ClientSecret: j.ClientSecret}
	}
	x, err := oauthflow.NewExchanger("TokenExchange", xc)
	if err != nil {
		return nil, fmt.Errorf("mcpadapter: NewTokenExchanger: %w", err)
	}
	return &TokenExchanger{x: x}, nil
}

// ExchangeError reports an exchange that gave no token: Issuer refused it
// or could not be reached. It quotes no token and no secret. Its fields:
// Issuer, the authorization server asked; Code, the OAuth error code
// Issuer answered with, if any (such as "invalid_grant"); Err, the cause
// (Unwrap returns it).
type ExchangeError = oauthflow.ExchangeError

// MaxExchangedToken bounds the size of a token TokenExchanger accepts
// from the issuer, 16 KiB: it goes in an HTTP header with every request,
// and a gateway keeps thousands.
const MaxExchangedToken = oauthflow.MaxExchangedToken

// Exchange exchanges subjectToken, an access token its user presented,
// for a token for Resource, and returns it (with its expiry, when Issuer
// says). A refusal is an *ExchangeError.
func (x *TokenExchanger) Exchange(ctx context.Context, subjectToken string) (*oauth2.Token, error) {
	return x.x.Exchange(ctx, subjectToken)
}

// ClientToken returns a token for the service itself (the client
// credentials grant) for Resource: what a gateway lists a server with,
// for no user. The grant is made at Issuer, or with IDJAG at its
// authorization server. A refusal is an *ExchangeError.
func (x *TokenExchanger) ClientToken(ctx context.Context) (*oauth2.Token, error) {
	return x.x.ClientToken(ctx)
}
