package config

import (
	"strconv"
	"strings"
)

// auth returns the "auth" member f: "oauth", a bearer token, or an object
// {"type": "oauth", "clientId", "clientSecret", "issuer", "scopes",
// "redirectUrl"}. An empty string is no auth: nil.
func (p *parser) auth(f member, path string) *Auth {
	switch f.val[0] {
	case '"':
		s, _ := p.expandedString(f, path)
		switch {
		case s == "":
			return nil
		case strings.EqualFold(s, "oauth"):
			return &Auth{OAuth: &OAuth{}}
		}
		return &Auth{Bearer: s}
	case '{':
		return p.authObject(f, path) // grant.go
	default:
		p.errorf(f.off, path, `want "oauth", a bearer token or an OAuth object, not %s`, jsonKind(f.val))
		return nil
	}
}

// oauth returns the auth object f.
func (p *parser) oauth(f member, path string) *OAuth {
	o := &OAuth{}
	typ := ""
	for _, e := range p.members(f.val, f.off, path, "key") {
		epath := joinPath(path, e.key)
		switch e.key {
		case "type":
			typ, _ = p.expandedString(e, epath)
			if !strings.EqualFold(typ, "oauth") {
				p.errorf(e.off, epath, `unknown auth type %q; want "oauth", "client_credentials", "jwt_bearer", "enterprise", "token_exchange" or "signin"`, rawString(e))
			}
		case "clientId":
			o.ClientID, _ = p.expandedString(e, epath)
		case "clientSecret":
			o.ClientSecret, _ = p.expandedString(e, epath)
		case "scopes":
			o.Scopes = p.stringList(e, epath, true)
		case "issuer":
			o.Issuer, _ = p.expandedString(e, epath)
		case "dpopKeyFile":
			o.DPoPKeyFile, _ = p.expandedString(e, epath)
		case "redirectUrl":
			var ok bool
			if o.RedirectURL, ok = p.expandedString(e, epath); ok {
				p.checkRedirectURL(e, epath, o.RedirectURL)
			}
		default:
			p.errorf(e.keyOff, epath, "unknown auth member %q; want type, clientId, clientSecret, issuer, scopes, redirectUrl or dpopKeyFile", e.key)
		}
	}
	if typ == "" {
		p.errorf(f.off, path, `an auth object needs "type": "oauth"`)
	}
	if (o.ClientSecret != "" || o.Issuer != "") && o.ClientID == "" {
		p.errorf(f.off, path, `"clientSecret" and "issuer" need "clientId"`)
	} else if o.ClientSecret != "" && o.Issuer == "" {
		p.errorf(f.off, path, `"clientSecret" needs "issuer": the authorization server the client is registered with (the secret is sent to no other)`)
	}
	return o
}

// checkRedirectURL checks the redirect URL e, expanded to s, with
// Options.CheckRedirectURL. Where the message quotes s (as %q does), it
// quotes e as written instead: an expanded ${VAR} may be a secret.
func (p *parser) checkRedirectURL(e member, path, s string) {
	if p.checkRedirect == nil {
		return
	}
	err := p.checkRedirect(s)
	if err == nil {
		return
	}
	msg := err.Error()
	if raw := rawString(e); raw != s {
		msg = strings.ReplaceAll(msg, strconv.Quote(s), strconv.Quote(raw))
	}
	p.errorf(e.off, path, "%s", msg)
}
