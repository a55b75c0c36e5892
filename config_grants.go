package mcpadapter

import (
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// GrantSettings are a config's settings for the grants that need no user
// (see ClientCredentials, JWTBearer and EnterpriseAuth):
//
//	"auth": {"type": "client_credentials", "issuer": "https://auth.example.com",
//	         "clientId": "svc", "privateKeyFile": "/etc/mcp/key.pem"}  (or "clientSecret")
//	"auth": {"type": "jwt_bearer", "issuer": "https://auth.example.com", "clientId": "ci",
//	         "assertionFile": "/var/run/secrets/tokens/mcp"}  (workload identity)
//	"auth": {"type": "enterprise", "issuer": "https://auth.example.com",
//	         "clientId": "app", "clientSecret": "${SECRET}",
//	         "idpTokenUrl": "https://idp.example.com/token", "idpClientId": "app",
//	         "idTokenCommand": ["my-sso", "print-id-token"]}  (or "idTokenFile")
//
// A fourth type, made per principal by a gateway (mcpadapter serve), not
// by a Client on its own:
//
//	"auth": {"type": "token_exchange", "issuer": "https://auth.example.com",
//	         "clientId": "gateway", "clientSecret": "${SECRET}",
//	         "resource": "https://mcp.example.com/mcp", "audience": "mcp", "scopes": ["read"]}
//
// exchanges each user's own access token (RFC 8693) for a token for the
// server (see TokenExchange); "resource" defaults to the server's URL.
// With "grant": "id-jag" the exchange at "issuer" (the identity provider)
// is for an ID-JAG, presented at the server's authorization server:
//
//	"auth": {"type": "token_exchange", "grant": "id-jag", "issuer": "https://idp.example.com",
//	         "clientId": "gateway", "clientSecret": "${IDP_SECRET}",
//	         "authorizationServer": "https://auth.crm.example.com",
//	         "asClientId": "gateway", "asClientSecret": "${AS_SECRET}", "scopes": ["read"]}
//
// A fifth, also a gateway's:
//
//	"auth": {"type": "signin", "issuer": "https://auth.example.com",
//	         "clientId": "gateway", "clientSecret": "${SECRET}", "scopes": ["read"]}
//
// signs each user in to the server through the gateway (a WebSignIn whose
// redirect URL is the gateway's own callback).
//
// "issuer" is required: the authorization server the credentials are for,
// the only one they are sent to (see ClientCredentials.Issuer). Each may
// add "scopes" and "dpopKeyFile" (a PEM key: DPoP-bound tokens). A member
// of another grant type is an error. Key files are read when the group is
// made; the assertion file (jwt_bearer), the ID token file or command
// (enterprise) each time that grant asks its issuer for a token, and for
// nothing else. The command's output, trimmed, is the token; its output
// never appears in an error.
type GrantSettings struct {
	Type                                                 string
	Issuer                                               string
	ClientID, ClientSecret                               string
	PrivateKeyFile                                       string
	AssertionFile                                        string
	IDTokenFile                                          string
	IDTokenCommand                                       []string
	IdPTokenURL, IdPIssuer, IdPClientID, IdPClientSecret string
	Scopes                                               []string
	DPoPKeyFile                                          string
	// Audience and Resource are a token exchange's (token_exchange).
	Audience, Resource string
	// Grant is "id-jag" for a token exchange's ID-JAG flow
	// (token_exchange), whose ID-JAG is presented at AuthorizationServer
	// as ASClientID (default: ClientID) with ASClientSecret (see
	// TokenExchange.IDJAG).
	Grant                      string
	AuthorizationServer        string
	ASClientID, ASClientSecret string
}

// auth returns the Auth of g, reading its key files, and checks it.
func (g *GrantSettings) auth() (Auth, error) {
	a, err := g.build()
	if err != nil {
		return nil, err
	}
	if err := a.check(); err != nil {
		return nil, err
	}
	return a, nil
}

func (g *GrantSettings) build() (grantAuth, error) {
	dpop, err := oauthflow.ReadKeyFile("dpopKeyFile", g.DPoPKeyFile)
	if err != nil {
		return nil, err
	}
	switch g.Type {
	case "client_credentials":
		key, err := oauthflow.ReadKeyFile("privateKeyFile", g.PrivateKeyFile)
		if err != nil {
			return nil, err
		}
		return &ClientCredentials{Issuer: g.Issuer, ClientID: g.ClientID, ClientSecret: g.ClientSecret, PrivateKey: key, Scopes: g.Scopes, DPoPKey: dpop}, nil
	case "jwt_bearer":
		return &JWTBearer{Issuer: g.Issuer, ClientID: g.ClientID, ClientSecret: g.ClientSecret, Assertion: AssertionFile(g.AssertionFile), Scopes: g.Scopes, DPoPKey: dpop}, nil
	case "enterprise":
		idToken := AssertionFile(g.IDTokenFile)
		if len(g.IDTokenCommand) > 0 {
			idToken = oauthflow.TokenCommand(g.IDTokenCommand)
		}
		return &EnterpriseAuth{Issuer: g.Issuer, IDToken: idToken, IdPTokenURL: g.IdPTokenURL, IdPIssuer: g.IdPIssuer,
			IdPClientID: g.IdPClientID, IdPClientSecret: g.IdPClientSecret,
			ClientID: g.ClientID, ClientSecret: g.ClientSecret, Scopes: g.Scopes, DPoPKey: dpop}, nil
	case "signin":
		return nil, errors.New(`a "signin" auth signs each user of a gateway (mcpadapter serve) in to the server through the gateway's pages; a Client on its own uses WebSignIn, or "oauth" for one user`)
	case "token_exchange":
		return nil, errors.New(`a "token_exchange" auth exchanges each user's token for one for the server: a gateway (mcpadapter serve) makes it, a Client on its own has no user's token to exchange`)
	}
	return nil, fmt.Errorf("unknown auth type %q", g.Type)
}
