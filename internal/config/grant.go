package config

import (
	"encoding/json"
	"strings"
)

// Grant holds an auth object of one of the grants that need no user:
// {"type": "client_credentials" | "jwt_bearer" | "enterprise", ...}, or
// of the token exchange a gateway makes for each of its users
// ("token_exchange"), or of the sign-in of each of its users to the
// server ("signin").
type Grant struct {
	// Type is "type", in lower case.
	Type string
	// Issuer is "issuer": the authorization server the credentials are
	// for, the only one they are sent to. Required.
	Issuer string
	// ClientID and ClientSecret are "clientId" and "clientSecret".
	ClientID, ClientSecret string
	// PrivateKeyFile is "privateKeyFile": a PEM key for private key JWT
	// client authentication (client_credentials).
	PrivateKeyFile string
	// AssertionFile is "assertionFile": the workload's JWT (jwt_bearer).
	AssertionFile string
	// IDTokenFile and IDTokenCommand are "idTokenFile" and
	// "idTokenCommand" (a command and its arguments, whose output is the
	// token): the user's ID token (enterprise).
	IDTokenFile    string
	IDTokenCommand []string
	// IdPTokenURL, IdPIssuer, IdPClientID and IdPClientSecret are
	// "idpTokenUrl", "idpIssuer", "idpClientId" and "idpClientSecret"
	// (enterprise).
	IdPTokenURL, IdPIssuer, IdPClientID, IdPClientSecret string
	// Scopes is "scopes".
	Scopes []string
	// DPoPKeyFile is "dpopKeyFile": a PEM key binding the tokens (DPoP).
	DPoPKeyFile string
	// Audience and Resource are "audience" and "resource": what a token
	// exchange asks a token for (token_exchange).
	Audience, Resource string
	// Grant is "grant" (token_exchange): "id-jag" for the ID-JAG flow,
	// whose ID-JAG is presented at AuthorizationServer
	// ("authorizationServer"), authenticated as ASClientID and
	// ASClientSecret ("asClientId", "asClientSecret").
	Grant                      string
	AuthorizationServer        string
	ASClientID, ASClientSecret string
}

// grantTypes are the "type" values of Grant auth objects.
var grantTypes = []string{"client_credentials", "jwt_bearer", "enterprise", "token_exchange", "signin"}

// authObject returns the auth object f: an OAuth object, or a Grant when
// its "type" is one of grantTypes.
func (p *parser) authObject(f member, path string) *Auth {
	var peek struct {
		Type json.RawMessage `json:"type"`
	}
	_ = json.Unmarshal(f.val, &peek)
	var typ string
	_ = json.Unmarshal(peek.Type, &typ)
	typ = strings.ToLower(typ)
	for _, g := range grantTypes {
		if typ == g {
			return &Auth{Grant: p.grant(f, path, typ)}
		}
	}
	return &Auth{OAuth: p.oauth(f, path)}
}

// grant parses a Grant auth object of type typ.
func (p *parser) grant(f member, path, typ string) *Grant {
	g := &Grant{Type: typ}
	allowed := map[string][]string{
		"client_credentials": {"clientId", "clientSecret", "privateKeyFile"},
		"jwt_bearer":         {"clientId", "clientSecret", "assertionFile"},
		"enterprise":         {"clientId", "clientSecret", "idTokenFile", "idTokenCommand", "idpTokenUrl", "idpIssuer", "idpClientId", "idpClientSecret"},
		"token_exchange":     {"clientId", "clientSecret", "audience", "resource", "grant", "authorizationServer", "asClientId", "asClientSecret"},
		"signin":             {"clientId", "clientSecret"},
	}[typ]
	allowed = append(allowed, "type", "issuer", "scopes")
	if typ != "token_exchange" && typ != "signin" {
		allowed = append(allowed, "dpopKeyFile")
	}
	str := map[string]*string{
		"issuer":   &g.Issuer,
		"clientId": &g.ClientID, "clientSecret": &g.ClientSecret, "privateKeyFile": &g.PrivateKeyFile,
		"assertionFile": &g.AssertionFile, "idTokenFile": &g.IDTokenFile, "idpTokenUrl": &g.IdPTokenURL,
		"idpIssuer": &g.IdPIssuer, "idpClientId": &g.IdPClientID, "idpClientSecret": &g.IdPClientSecret,
		"dpopKeyFile": &g.DPoPKeyFile, "audience": &g.Audience, "resource": &g.Resource,
		"grant": &g.Grant, "authorizationServer": &g.AuthorizationServer, "asClientId": &g.ASClientID, "asClientSecret": &g.ASClientSecret,
	}
	grantOff := f.off
	for _, e := range p.members(f.val, f.off, path, "key") {
		epath := joinPath(path, e.key)
		if e.key == "grant" {
			grantOff = e.off
		}
		known := false
		for _, a := range allowed {
			known = known || a == e.key
		}
		switch {
		case !known:
			p.errorf(e.keyOff, epath, "unknown member %q of a %q auth object; want %s", e.key, typ, strings.Join(allowed, ", "))
		case e.key == "type":
		case e.key == "scopes":
			g.Scopes = p.stringList(e, epath, true)
		case e.key == "idTokenCommand":
			g.IDTokenCommand = p.stringList(e, epath, true)
		default:
			*str[e.key], _ = p.expandedString(e, epath)
		}
	}
	need := func(ok bool, msg string) {
		if !ok {
			p.errorf(f.off, path, "a %q auth object needs %s", typ, msg)
		}
	}
	need(g.Issuer != "", `"issuer": the authorization server the credentials are for (they are sent to no other)`)
	switch typ {
	case "client_credentials":
		need(g.ClientID != "", `"clientId"`)
		need((g.ClientSecret != "") != (g.PrivateKeyFile != ""), `"clientSecret" or "privateKeyFile" (one of them)`)
	case "jwt_bearer":
		need(g.AssertionFile != "", `"assertionFile"`)
	case "enterprise":
		need(g.ClientID != "", `"clientId"`)
		need((g.IDTokenFile != "") != (len(g.IDTokenCommand) > 0), `"idTokenFile" or "idTokenCommand" (one of them)`)
		need(g.IdPTokenURL != "" || g.IdPIssuer != "", `"idpTokenUrl" or "idpIssuer"`)
	case "token_exchange", "signin":
		need(g.ClientID != "", `"clientId"`)
	}
	if typ == "token_exchange" {
		p.idjag(f, grantOff, path, g)
	}
	return g
}

// idjag checks the ID-JAG members of a "token_exchange" auth object g.
// grantOff is where its "grant" member's value starts.
func (p *parser) idjag(f member, grantOff int, path string, g *Grant) {
	switch g.Grant {
	case "":
		if g.AuthorizationServer != "" || g.ASClientID != "" || g.ASClientSecret != "" {
			p.errorf(f.off, path, `"authorizationServer", "asClientId" and "asClientSecret" go with "grant": "id-jag"`)
		}
	case "id-jag":
		if g.AuthorizationServer == "" {
			p.errorf(f.off, path, `a "token_exchange" auth object with "grant": "id-jag" needs "authorizationServer": the MCP server's authorization server, where the ID-JAG is presented`)
		}
		if g.Audience != "" {
			p.errorf(f.off, path, `"audience" does not go with "grant": "id-jag": the ID-JAG's audience is "authorizationServer"`)
		}
	default:
		p.errorf(grantOff, joinPath(path, "grant"), `unknown grant %q of a "token_exchange" auth object; want "id-jag" (or no "grant")`, g.Grant)
	}
}
