package oauthflow

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// FetchServerMetadata returns the metadata of the authorization server
// issuer (RFC 8414, or OpenID Connect discovery), trying the well-known
// URLs the MCP specification lists, or nil when none has any. Unlike
// go-sdk's auth.GetAuthServerMetadata it does not require PKCE, which
// only the authorization code grant uses. It checks what go-sdk checks:
// the metadata's issuer is issuer (a trailing slash aside), and the
// endpoints a client calls are https or loopback URLs with no script
// scheme. Redirects are not followed.
func FetchServerMetadata(ctx context.Context, hc *http.Client, issuer string) (*oauthex.AuthServerMeta, error) {
	if err := checkEndpoint("issuer", issuer); err != nil {
		return nil, err
	}
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("issuer %q: %w", issuer, err)
	}
	var urls []string
	path := strings.Trim(u.Path, "/")
	at := func(p string) string {
		c := *u
		c.RawQuery, c.Fragment, c.RawPath = "", "", ""
		c.Path = p
		return c.String()
	}
	if path == "" {
		urls = []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	} else {
		urls = []string{
			at("/.well-known/oauth-authorization-server/" + path),
			at("/.well-known/openid-configuration/" + path),
			at("/" + path + "/.well-known/openid-configuration"),
		}
	}
	noRedirect := *hc
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, mu := range urls {
		meta, err := getMetadata(ctx, &noRedirect, mu)
		if err != nil {
			return nil, err
		}
		if meta == nil {
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("the metadata at %s names the issuer %q, not %q", mu, meta.Issuer, issuer)
		}
		for name, v := range map[string]string{
			"token_endpoint": meta.TokenEndpoint, "authorization_endpoint": meta.AuthorizationEndpoint,
			"registration_endpoint": meta.RegistrationEndpoint, "jwks_uri": meta.JWKSURI,
		} {
			if v == "" {
				continue
			}
			if err := checkEndpoint(name, v); err != nil {
				return nil, fmt.Errorf("the metadata of %s: %w", issuer, err)
			}
		}
		return meta, nil
	}
	return nil, nil
}

// getMetadata fetches one metadata document: nil for a 4xx answer or a
// redirect (the next URL is tried).
func getMetadata(ctx context.Context, hc *http.Client, u string) (*oauthex.AuthServerMeta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata %s: %w", u, scrubURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 500 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("authorization server metadata %s: HTTP %d", u, resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, fmt.Errorf("authorization server metadata %s: content type %q, want application/json", u, resp.Header.Get("Content-Type"))
	}
	var meta oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta); err != nil {
		return nil, fmt.Errorf("authorization server metadata %s: %w", u, err)
	}
	return &meta, nil
}

// checkEndpoint checks a URL the client sends requests or secrets to: an
// absolute https URL, or http on a loopback host; not a literal private
// address.
func checkEndpoint(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%s %q: want an absolute https URL", name, raw)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("%s %q: want https (http only on a loopback host)", name, raw)
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && PrivateAddr(ip) {
		return fmt.Errorf("%s %q: a non-public address", name, raw)
	}
	return nil
}

// CheckIssuer reports an issuer URL the client must not use: one that is
// not an absolute https URL (or http on a loopback host).
func CheckIssuer(issuer string) error {
	return checkEndpoint("issuer", issuer)
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
