package oauthflow

import (
	"context"
	"crypto"
	"net/http"
	"net/url"
	"slices"

	"golang.org/x/oauth2"
)

// AuthServerClient returns the client for the requests to authorization
// servers: hc with go-sdk's check of the addresses a server names kept
// (PublicOnly: no private or link-local address, except on the
// trusted hosts, which the user named), token and registration requests
// never redirected (NoPostRedirects), and with a DPoP key (nil
// for none) a proof on each token request, above the check.
func AuthServerClient(hc *http.Client, key crypto.Signer, trusted ...string) (*DPoP, *http.Client) {
	hc = NoPostRedirects(PublicOnly(hc, trusted...))
	if key == nil {
		return nil, hc
	}
	return withDPoP(key, hc)
}

// withDPoP returns the DPoP state of key and hc with its token requests
// proved. key was checked.
func withDPoP(key crypto.Signer, hc *http.Client) (*DPoP, *http.Client) {
	d, err := NewDPoP(key)
	if err != nil {
		return nil, hc
	}
	out := &http.Client{}
	if hc != nil {
		*out = *hc
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = d.TokenTransport(base)
	return d, out
}

// HostOf returns the host name of the URL raw, or "".
func HostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// WithScopes returns g asking for scopes besides the scopes of its Target
// (g itself when there are none).
func WithScopes(g Grant, scopes []string) Grant {
	if len(scopes) == 0 {
		return g
	}
	return func(ctx context.Context, hc *http.Client, t Target) (*oauth2.Token, error) {
		for _, s := range scopes {
			if !slices.Contains(t.Scopes, s) {
				t.Scopes = append(slices.Clip(t.Scopes), s)
			}
		}
		return g(ctx, hc, t)
	}
}
