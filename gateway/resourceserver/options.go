package resourceserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultLeeway          = 30 * time.Second
	DefaultTimeout         = 5 * time.Second
	DefaultJWKSMinRefresh  = 10 * time.Second
	DefaultJWKSMaxAge      = time.Hour
	DefaultDPoPProofMaxAge = time.Minute
	DefaultDPoPNonceTTL    = 5 * time.Minute
	DefaultReplayEntries   = 100_000
	DefaultIntrospectTTL   = time.Minute
	DefaultIntrospectSize  = 10_000
	DefaultVerifiedTTL     = time.Minute
	maxVerifiedEntries     = 10_000
)

// defaultAlgorithms are the JWS algorithms accepted for access tokens and
// DPoP proofs when Options.Algorithms is empty: asymmetric ones only.
var defaultAlgorithms = []string{"RS256", "PS256", "ES256", "ES384", "EdDSA"}

// DefaultAlgorithms returns the algorithms a Guard accepts when
// Options.Algorithms is empty.
func DefaultAlgorithms() []string { return slices.Clone(defaultAlgorithms) }

// Options configures a Guard.
type Options struct {
	// Resource is the gateway's resource URL, as clients reach it (an
	// https URL, or http on a loopback host): the audience tokens must
	// name, the "resource" of the protected resource metadata, and the
	// origin DPoP proofs' htu must have. Required.
	Resource string
	// Issuers are the authorization servers whose JWT access tokens are
	// accepted (their issuer identifiers), listed in the metadata.
	Issuers []string
	// JWKSURL, if set, is where the keys of the only issuer are; empty
	// means the jwks_uri of each issuer's metadata (RFC 8414, then OpenID
	// Connect discovery). Either is https, or http on a loopback host.
	JWKSURL string
	// Scopes are the scopes every token needs (403 insufficient_scope
	// without them), also the metadata's scopes_supported.
	Scopes []string
	// Algorithms are the JWS algorithms accepted for access tokens and
	// DPoP proofs; empty means DefaultAlgorithms. Symmetric algorithms
	// (HS256...) and "none" are refused.
	Algorithms []string
	// VerifiedTTL is how long a verified JWT's grant is reused for the
	// same token without checking its signature and claims again (never
	// past its exp); zero means DefaultVerifiedTTL, negative never. A
	// DPoP proof is checked on every request regardless.
	VerifiedTTL time.Duration
	// Leeway is the clock skew allowed on exp, nbf and iat; zero means
	// DefaultLeeway.
	Leeway time.Duration

	// Introspection, if set, checks tokens that are not JWTs of Issuers:
	// an active one whose answer's aud names Resource is accepted.
	Introspection *Introspection

	// APIKeys are static keys accepted as bearer tokens.
	APIKeys []APIKey

	// DPoPProofMaxAge bounds the age of a DPoP proof (its iat); zero
	// means DefaultDPoPProofMaxAge.
	DPoPProofMaxAge time.Duration
	// DPoPNonce makes proofs carry a nonce the Guard issued (RFC 9449
	// section 8); nonces last DefaultDPoPNonceTTL. Replicas behind one
	// address need the same DPoPNonceKey.
	DPoPNonce bool
	// DPoPNonceKey, if set (at least 32 bytes), keys the nonces; empty
	// means a random key for the life of the Guard.
	DPoPNonceKey []byte
	// ReplayStore remembers the DPoP proofs accepted, so that each is
	// accepted once; replicas behind one address share one (a
	// redisstore.LimitStore or pgstore.LimitStore), or a proof could be
	// used once on each. Nil means one in memory, for this Guard alone.
	// A store that fails or does not answer within Timeout refuses the
	// proof with 503: a replay is never let through.
	ReplayStore ReplayStore
	// MaxReplayPerPrincipal bounds the live proofs remembered for one
	// principal; zero means DefaultReplayPerPrincipal. A principal over
	// it (a client sending more proofs than that within
	// DPoPProofMaxAge plus Leeway) gets 429 with Retry-After; other
	// principals are not held back.
	MaxReplayPerPrincipal int
	// MaxReplayEntries bounds the proofs the in-memory replay store
	// remembers in all; zero means DefaultReplayEntries. When it is full
	// of live proofs, new proofs are refused with 429.
	MaxReplayEntries int

	// HTTPClient fetches metadata and keys and calls the introspection
	// endpoint; nil means a plain client. Redirects are never followed
	// (its CheckRedirect is replaced). Timeout bounds each of those
	// requests (zero: DefaultTimeout).
	HTTPClient *http.Client
	Timeout    time.Duration
	// JWKSMinRefresh is the least time between two fetches of an issuer's
	// keys for tokens naming a key it does not know; zero means
	// DefaultJWKSMinRefresh. JWKSMaxAge is how long fetched keys are used
	// before they are fetched again; zero means DefaultJWKSMaxAge.
	JWKSMinRefresh, JWKSMaxAge time.Duration

	// Logger receives a line for each refusal, with its reason; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Introspection is the token introspection endpoint (RFC 7662) of the
// authorization server, with the credentials of the gateway as its client.
type Introspection struct {
	// URL is the endpoint (https, or http on a loopback host); ClientID
	// and ClientSecret authenticate the gateway (HTTP Basic).
	URL, ClientID, ClientSecret string
	// CacheTTL bounds how long an answer is reused (never past the
	// token's exp); zero means DefaultIntrospectTTL, negative no cache.
	CacheTTL time.Duration
	// MaxEntries bounds the cache; zero means DefaultIntrospectSize.
	MaxEntries int
}

// An APIKey is a static credential: the request's bearer token Key makes it
// a request of Principal, with Scopes (none means Options.Scopes).
type APIKey struct {
	Principal string
	Key       string
	Scopes    []string
}

// String names the key's principal, never the key.
func (k APIKey) String() string { return "API key of " + k.Principal }

// check reports settings that cannot work.
func (o *Options) check() error {
	var errs []error
	u, err := url.Parse(o.Resource)
	switch {
	case o.Resource == "":
		errs = append(errs, errors.New("Options.Resource is empty: the gateway's URL, the audience of its tokens"))
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" || u.RawQuery != "":
		errs = append(errs, fmt.Errorf("Options.Resource %q: want an absolute http(s) URL without query or fragment", o.Resource))
	case u.Scheme == "http" && !isLoopbackHost(u.Hostname()):
		errs = append(errs, fmt.Errorf("Options.Resource %q: http only on a loopback host; want https", o.Resource))
	}
	for _, iss := range o.Issuers {
		if !secureURL(iss) || strings.Contains(iss, "#") {
			errs = append(errs, fmt.Errorf("Options.Issuers: %q is not an https URL (http only on loopback)", iss))
		}
	}
	if o.JWKSURL != "" && len(o.Issuers) != 1 {
		errs = append(errs, errors.New("Options.JWKSURL needs exactly one issuer"))
	}
	if o.JWKSURL != "" && !secureURL(o.JWKSURL) {
		errs = append(errs, fmt.Errorf("Options.JWKSURL %q is not an https URL (http only on loopback)", o.JWKSURL))
	}
	for _, a := range o.Algorithms {
		if !slices.Contains(supportedAlgorithms, a) {
			errs = append(errs, fmt.Errorf("Options.Algorithms: %q is not accepted (want some of %s)", a, strings.Join(supportedAlgorithms, ", ")))
		}
	}
	if in := o.Introspection; in != nil && (in.URL == "" || in.ClientID == "") {
		errs = append(errs, errors.New("Options.Introspection needs URL and ClientID"))
	} else if in != nil && !secureURL(in.URL) {
		errs = append(errs, fmt.Errorf("Options.Introspection.URL %q is not an https URL (http only on loopback)", in.URL))
	}
	seen := map[string]bool{}
	for i, k := range o.APIKeys {
		switch {
		case k.Principal == "":
			errs = append(errs, fmt.Errorf("Options.APIKeys[%d] has no Principal", i))
		case len(k.Key) < 16:
			errs = append(errs, fmt.Errorf("Options.APIKeys: the key of %s is shorter than 16 bytes", k.Principal))
		case seen[k.Key]:
			errs = append(errs, fmt.Errorf("Options.APIKeys: the key of %s is another principal's too", k.Principal))
		}
		seen[k.Key] = true
	}
	if o.DPoPNonceKey != nil && len(o.DPoPNonceKey) < 32 {
		errs = append(errs, errors.New("Options.DPoPNonceKey is shorter than 32 bytes"))
	}
	if len(o.Issuers) == 0 && o.Introspection == nil && len(o.APIKeys) == 0 {
		errs = append(errs, errors.New("no credential is accepted: set Issuers, Introspection or APIKeys"))
	}
	return errors.Join(errs...)
}

// supportedAlgorithms are the asymmetric JWS algorithms a Guard can check.
var supportedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// secureURL reports whether the Guard may send requests to raw (or take
// keys from it): an absolute https URL, or http on a loopback host.
func secureURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "https" || u.Scheme == "http" && isLoopbackHost(u.Hostname())
}
