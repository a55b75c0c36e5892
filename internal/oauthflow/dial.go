package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"
)

// PublicOnly returns the HTTP client for requests to authorization
// servers: hc (nil means a plain client) with a dialer that refuses
// private, link-local (the cloud metadata endpoint 169.254.169.254),
// carrier-grade NAT, multicast and unspecified addresses, as go-sdk's
// discovery client does. Loopback stays allowed (a local authorization
// server), and so do the hosts in trusted, which the user named (the MCP
// server's, a pinned issuer's, an identity provider's): the check is
// against addresses a server chose. The address checked is the one
// dialled, after name resolution, so a name that resolves to a private
// address is refused too.
//
// A client whose transport is not an *http.Transport, or dials or uses a
// proxy on its own, is returned as it is: its owner has taken over
// dialling (go-sdk makes the same exception). A nil hc, or one with no
// Transport, gets a transport of its own that keeps no idle connections.
func PublicOnly(hc *http.Client, trusted ...string) *http.Client {
	var base *http.Transport
	switch {
	case hc == nil || hc.Transport == nil:
		// Its own transport: a token is asked for seldom, and no idle
		// connection outlives the request.
		base = http.DefaultTransport.(*http.Transport).Clone()
		base.DisableKeepAlives = true
	default:
		t, ok := hc.Transport.(*http.Transport)
		if !ok || t.DialContext != nil || t.DialTLSContext != nil || proxied(t) {
			return hc
		}
		base = t.Clone()
	}
	if base.Proxy != nil && proxied(base) {
		return hc
	}
	hosts := make([]string, 0, len(trusted))
	for _, h := range trusted {
		if h != "" {
			hosts = append(hosts, strings.ToLower(h))
		}
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	checked := &net.Dialer{Timeout: d.Timeout, KeepAlive: d.KeepAlive, Control: refusePrivate}
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		if slices.Contains(hosts, strings.ToLower(strings.Trim(host, "[]"))) {
			return d.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
	out := &http.Client{Timeout: 30 * time.Second}
	if hc != nil {
		*out = *hc
	}
	out.Transport = base
	return out
}

// NoPostRedirects returns a copy of hc (nil means a plain client) that
// does not follow the redirect of a POST: a token or registration request
// carries a client secret, an assertion, a code or a DPoP proof for the
// endpoint the authorization server's metadata names, and for no other.
// The 3xx answer is returned as it is. Other requests are redirected as
// hc would redirect them.
func NoPostRedirects(hc *http.Client) *http.Client {
	out := &http.Client{}
	if hc != nil {
		*out = *hc
	}
	next := out.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if m := via[0].Method; m != http.MethodGet && m != http.MethodHead {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return out
}

// proxied reports whether t sends requests through a proxy (then the
// address dialled is the proxy's, and the check would be about it).
func proxied(t *http.Transport) bool {
	if t.Proxy == nil {
		return false
	}
	req, err := http.NewRequest(http.MethodGet, "https://proxy-check.invalid", nil)
	if err != nil {
		return false
	}
	u, err := t.Proxy(req)
	return err == nil && u != nil
}

// refusePrivate is the dialer's Control: it refuses an address that a
// server-chosen URL must not reach.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dialling %q: not an IP address", address)
	}
	if PrivateAddr(ip) {
		return fmt.Errorf("refusing to connect to the non-public address %s (named by a server; set an HTTPClient of your own to allow it)", ip)
	}
	return nil
}

// cgnat is the carrier-grade NAT range (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// PrivateAddr reports whether ip is an address a server-chosen URL must
// not reach: private (RFC 1918, RFC 4193), link-local, carrier-grade NAT,
// multicast or unspecified. Loopback is not among them.
func PrivateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return true
	}
	return ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() || cgnat.Contains(ip)
}
