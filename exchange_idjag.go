package mcpadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The ID-JAG flow of a TokenExchange (TokenExchange.IDJAG): the flow
// EnterpriseAuth makes with a user's ID token (oauthflow.Enterprise), made
// with the access token a service's user presented.

// idjagState is what a TokenExchanger of the ID-JAG flow keeps (under its
// mu): the authorization server's metadata, and whether the MCP server's
// protected resource metadata was found to name it.
type idjagState struct {
	asMeta  *oauthex.AuthServerMeta
	checked bool
}

// checkIDJAGExchange reports settings of cfg's ID-JAG flow that cannot
// work.
func checkIDJAGExchange(cfg *TokenExchange) error {
	j := cfg.IDJAG
	if j == nil {
		return nil
	}
	const hint = ` (in a config, the auth object's "authorizationServer")`
	if j.AuthorizationServer == "" {
		return errors.New("TokenExchange.IDJAG.AuthorizationServer is empty: set it to the MCP server's authorization server" + hint + ", the only one the ID-JAG and IDJAG.ClientSecret are sent to")
	}
	if err := oauthflow.CheckIssuer(j.AuthorizationServer); err != nil {
		return fmt.Errorf("TokenExchange.IDJAG.AuthorizationServer%s: %w", hint, err)
	}
	if cfg.Audience != "" {
		return errors.New("TokenExchange.Audience is set with IDJAG: the ID-JAG's audience is IDJAG.AuthorizationServer")
	}
	return nil
}

func (x *TokenExchanger) asClientAuth() oauthflow.ClientAuth {
	return oauthflow.ClientAuth{ClientID: x.cfg.IDJAG.ClientID, ClientSecret: x.cfg.IDJAG.ClientSecret}
}

// authServerTarget returns the target at the ID-JAG flow's authorization
// server, once the MCP server's protected resource metadata, when it has
// any, is found to name that server: one naming only others is refused
// before anything is sent anywhere.
func (x *TokenExchanger) authServerTarget(ctx context.Context) (oauthflow.Target, error) {
	as := x.cfg.IDJAG.AuthorizationServer
	x.mu.Lock()
	checked := x.idj.checked
	x.mu.Unlock()
	if !checked {
		prm := oauthflow.ResourceMetadata(ctx, x.hc, x.cfg.Resource)
		if err := oauthflow.CheckAuthServers(prm, as); err != nil {
			return oauthflow.Target{}, &ExchangeError{Issuer: as, Err: err}
		}
		// Metadata not found is looked for again at the next exchange.
		x.mu.Lock()
		x.idj.checked = prm != nil
		x.mu.Unlock()
	}
	meta, err := x.metadata(ctx, as, &x.idj.asMeta)
	if err != nil {
		return oauthflow.Target{}, err
	}
	return oauthflow.Target{AS: meta, Resource: x.cfg.Resource, Scopes: x.cfg.Scopes}, nil
}

// exchangeIDJAG exchanges subjectToken at the identity provider (Issuer)
// for an ID-JAG and presents it at the authorization server for a token.
func (x *TokenExchanger) exchangeIDJAG(ctx context.Context, subjectToken string) (*oauth2.Token, error) {
	if subjectToken == "" {
		return nil, &ExchangeError{Issuer: x.cfg.Issuer, Err: errors.New("no subject token to exchange")}
	}
	t, err := x.authServerTarget(ctx)
	if err != nil {
		return nil, err
	}
	idp, err := x.metadata(ctx, x.cfg.Issuer, &x.meta)
	if err != nil {
		return nil, err
	}
	flow := oauthflow.Enterprise{
		IDToken:          func(context.Context) (string, error) { return subjectToken, nil },
		SubjectTokenType: oauthflow.TokenTypeAccessToken,
		IdPTokenURL:      idp.TokenEndpoint,
		IdP:              x.clientAuth(),
		Client:           x.asClientAuth(),
	}
	tok, err := flow.Grant()(ctx, x.hc, t)
	issuer := x.cfg.Issuer
	if step := (*oauthflow.AuthServerStepError)(nil); errors.As(err, &step) {
		issuer = x.cfg.IDJAG.AuthorizationServer
	}
	if err != nil {
		return nil, fail(issuer, err)
	}
	if err := checkIssuedToken(tok.AccessToken); err != nil {
		return nil, &ExchangeError{Issuer: x.cfg.IDJAG.AuthorizationServer, Err: err}
	}
	return tok, nil
}
