package oauthflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The ID-JAG flow of an Exchanger (ExchangerConfig.IDJAG): the flow
// EnterpriseAuth makes with a user's ID token (Enterprise), made with the
// access token a service's user presented.

// idjagState is what an Exchanger of the ID-JAG flow keeps (under its
// mu): the authorization server's metadata, and whether the MCP server's
// protected resource metadata was found to name it.
type idjagState struct {
	asMeta  *oauthex.AuthServerMeta
	checked bool
}

// checkIDJAGExchange reports settings of cfg's ID-JAG flow that cannot work,
// naming them under what.
func checkIDJAGExchange(what string, cfg ExchangerConfig) error {
	j := cfg.IDJAG
	if j == nil {
		return nil
	}
	const hint = ` (in a config, the auth object's "authorizationServer")`
	if j.AuthorizationServer == "" {
		return errors.New(what + ".IDJAG.AuthorizationServer is empty: set it to the MCP server's authorization server" + hint + ", the only one the ID-JAG and IDJAG.ClientSecret are sent to")
	}
	if err := CheckIssuer(j.AuthorizationServer); err != nil {
		return fmt.Errorf("%s.IDJAG.AuthorizationServer%s: %w", what, hint, err)
	}
	if cfg.Audience != "" {
		return fmt.Errorf("%s.Audience is set with IDJAG: the ID-JAG's audience is IDJAG.AuthorizationServer", what)
	}
	return nil
}

func (x *Exchanger) asClientAuth() ClientAuth {
	return ClientAuth{ClientID: x.cfg.IDJAG.ClientID, ClientSecret: x.cfg.IDJAG.ClientSecret}
}

// authServerTarget returns the target at the ID-JAG flow's authorization
// server, once the MCP server's protected resource metadata, when it has
// any, is found to name that server: one naming only others is refused
// before anything is sent anywhere.
func (x *Exchanger) authServerTarget(ctx context.Context) (Target, error) {
	as := x.cfg.IDJAG.AuthorizationServer
	x.mu.Lock()
	checked := x.idj.checked
	x.mu.Unlock()
	if !checked {
		prm := ResourceMetadata(ctx, x.hc, x.cfg.Resource)
		if err := CheckAuthServers(prm, as); err != nil {
			return Target{}, &ExchangeError{Issuer: as, Err: err}
		}
		// Metadata not found is looked for again at the next exchange.
		x.mu.Lock()
		x.idj.checked = prm != nil
		x.mu.Unlock()
	}
	meta, err := x.metadata(ctx, as, &x.idj.asMeta)
	if err != nil {
		return Target{}, err
	}
	return Target{AS: meta, Resource: x.cfg.Resource, Scopes: x.cfg.Scopes}, nil
}

// exchangeIDJAG exchanges subjectToken at the identity provider (the
// issuer) for an ID-JAG and presents it at the authorization server for a
// token.
func (x *Exchanger) exchangeIDJAG(ctx context.Context, subjectToken string) (*oauth2.Token, error) {
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
	flow := Enterprise{
		IDToken:          func(context.Context) (string, error) { return subjectToken, nil },
		SubjectTokenType: TokenTypeAccessToken,
		IdPTokenURL:      idp.TokenEndpoint,
		IdP:              x.clientAuth(),
		Client:           x.asClientAuth(),
	}
	tok, err := flow.Grant()(ctx, x.hc, t)
	issuer := x.cfg.Issuer
	if step := (*AuthServerStepError)(nil); errors.As(err, &step) || err == nil {
		issuer = x.cfg.IDJAG.AuthorizationServer
	}
	return issued(issuer, tok, err)
}
