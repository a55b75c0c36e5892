package resourceserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxDocumentBytes bounds a metadata, JWKS or introspection response.
const maxDocumentBytes = 1 << 20

// keySet is the signing keys of one issuer: fetched when first needed,
// again when older than maxAge, and when a token names a key it does not
// hold, at most once per minRefresh. One fetch runs at a time; requests
// that need it wait for it (or for their own context).
type keySet struct {
	issuer     string
	jwksURL    string // "" until discovered from the issuer's metadata
	fetcher    *fetcher
	minRefresh time.Duration
	maxAge     time.Duration

	mu       sync.Mutex
	keys     []jose.JSONWebKey // public signing keys
	fetched  time.Time         // when keys were fetched
	tried    time.Time         // when a fetch last started
	inflight chan struct{}     // closed when the running fetch ends
	lastErr  error
	// gen counts the key sets fetched: a grant verified with one is
	// reused only while it is the current one, so a key dropped from the
	// set stops its tokens at once.
	gen atomic.Uint64
}

// errUnavailable marks a failure that is not the token's: keys or an
// introspection answer that could not be had.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// candidates returns the keys that may have signed a token whose header
// names kid (all keys when kid is empty), and the generation of the set
// they are of, fetching the set if it is missing or stale, or refreshing
// it once for a kid it does not know.
func (ks *keySet) candidates(ctx context.Context, kid string, now time.Time) ([]jose.JSONWebKey, uint64, error) {
	refreshed := false
	for range 3 {
		ks.mu.Lock()
		keys, fetched, tried, wait, lastErr := ks.keys, ks.fetched, ks.tried, ks.inflight, ks.lastErr
		gen := ks.gen.Load()
		ks.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
				refreshed = true
				continue
			case <-ctx.Done():
				return nil, 0, &unavailableError{fmt.Errorf("waiting for the keys of %s: %w", ks.issuer, context.Cause(ctx))}
			}
		}
		found := pick(keys, kid)
		fresh := !fetched.IsZero() && now.Sub(fetched) <= ks.maxAge
		mayFetch := !refreshed && (tried.IsZero() || now.Sub(tried) >= ks.minRefresh)
		if len(found) > 0 && (fresh || !mayFetch) {
			// A stale set whose refresh failed is used as it is until the
			// next refresh is due.
			return found, gen, nil
		}
		if !mayFetch {
			if fetched.IsZero() {
				if lastErr == nil {
					lastErr = errors.New("not fetched")
				}
				return nil, 0, &unavailableError{fmt.Errorf("the keys of %s: %w", ks.issuer, lastErr)}
			}
			return nil, 0, fmt.Errorf("no key %q in the key set of %s", kid, ks.issuer)
		}
		ks.refresh(ctx, now)
		refreshed = true
	}
	return nil, 0, &unavailableError{fmt.Errorf("the keys of %s keep changing", ks.issuer)}
}

// refresh fetches the keys, unless another request is fetching them.
// The fetch is bounded by the fetcher's timeout, not by ctx: a request
// that gives up does not waste the fetch others wait for.
func (ks *keySet) refresh(ctx context.Context, now time.Time) {
	ks.mu.Lock()
	if ks.inflight != nil {
		ks.mu.Unlock()
		return
	}
	done := make(chan struct{})
	ks.inflight, ks.tried = done, now
	ks.mu.Unlock()

	keys, err := ks.fetch(context.WithoutCancel(ctx))

	ks.mu.Lock()
	if err == nil {
		ks.keys, ks.fetched, ks.lastErr = keys, time.Now(), nil
		ks.gen.Add(1)
	} else {
		ks.lastErr = err
	}
	ks.inflight = nil
	ks.mu.Unlock()
	close(done)
	if err != nil {
		ks.fetcher.log.Warn("resourceserver: fetching an issuer's keys failed", "issuer", ks.issuer, "err", err)
	}
}

func (ks *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	u := ks.jwksURL
	if u == "" {
		var err error
		if u, err = ks.fetcher.discoverJWKS(ctx, ks.issuer); err != nil {
			return nil, err
		}
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := ks.fetcher.getJSON(ctx, u, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) != nil || !k.Valid() {
			continue // a key of a type go-jose does not know, or broken
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub := k.Public()
		if !pub.Valid() || !pub.IsPublic() {
			continue // a symmetric key: never used to verify
		}
		keys = append(keys, pub)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("JWKS at %s holds no public signing key", u)
	}
	if ks.jwksURL == "" {
		ks.mu.Lock()
		ks.jwksURL = u
		ks.mu.Unlock()
	}
	return keys, nil
}

// pick returns the keys with the given kid, or all keys for "".
func pick(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid == "" {
		return keys
	}
	for i := range keys {
		if keys[i].KeyID == kid {
			return keys[i : i+1]
		}
	}
	return nil
}

// fetcher makes the Guard's outgoing GET requests, bounded in time and
// size.
type fetcher struct {
	hc      *http.Client
	timeout time.Duration
	log     interface {
		Warn(msg string, args ...any)
	}
}

func (f *fetcher) getJSON(ctx context.Context, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocumentBytes {
		return fmt.Errorf("GET %s: the answer is over %d bytes", u, maxDocumentBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not JSON: %w", u, err)
	}
	return nil
}

// discoverJWKS reads the jwks_uri of an issuer's metadata: RFC 8414's
// well-known path, then OpenID Connect's. The metadata's issuer must be
// the issuer asked about.
func (f *fetcher) discoverJWKS(ctx context.Context, issuer string) (string, error) {
	var errs []error
	for _, u := range metadataURLs(issuer) {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := f.getJSON(ctx, u, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if md.Issuer != issuer {
			errs = append(errs, fmt.Errorf("the metadata at %s names issuer %q", u, md.Issuer))
			continue
		}
		if md.JWKSURI == "" {
			errs = append(errs, fmt.Errorf("the metadata at %s has no jwks_uri", u))
			continue
		}
		if !secureURL(md.JWKSURI) {
			errs = append(errs, fmt.Errorf("the metadata at %s names jwks_uri %q: not https (http only on loopback)", u, md.JWKSURI))
			continue
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("discovering the keys of %s: %w", issuer, errors.Join(errs...))
}

// metadataURLs are the metadata addresses of an issuer (RFC 8414 section
// 3.1, then OpenID Connect Discovery).
func metadataURLs(issuer string) []string {
	i := strings.Index(issuer, "://")
	rest := issuer[i+3:]
	host, path, _ := strings.Cut(rest, "/")
	origin := issuer[:i+3] + host
	path = strings.TrimSuffix(path, "/")
	if path == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{origin + "/.well-known/oauth-authorization-server/" + path, strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"}
}
