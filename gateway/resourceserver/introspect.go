package resourceserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// introspector asks the authorization server about tokens (RFC 7662) and
// keeps its answers about active tokens for at most their remaining life,
// in a bounded cache keyed by the tokens' SHA-256.
type introspector struct {
	cfg     Introspection
	f       *fetcher
	ttl     time.Duration
	maxSize int

	mu    sync.Mutex
	cache map[[32]byte]cached
}

type cached struct {
	g     *grant
	until time.Time
}

func newIntrospector(cfg *Introspection, f *fetcher) *introspector {
	return &introspector{
		cfg:     *cfg,
		f:       f,
		ttl:     orDuration(cfg.CacheTTL, DefaultIntrospectTTL),
		maxSize: orInt(cfg.MaxEntries, DefaultIntrospectSize),
		cache:   make(map[[32]byte]cached),
	}
}

// check returns the grant of an active token for resource.
func (in *introspector) check(ctx context.Context, tok, resource string, now time.Time, leeway time.Duration) (*grant, error) {
	key := sha256.Sum256([]byte(tok))
	if in.cfg.CacheTTL >= 0 {
		in.mu.Lock()
		c, ok := in.cache[key]
		if ok && now.After(c.until) {
			delete(in.cache, key)
			ok = false
		}
		in.mu.Unlock()
		if ok {
			return c.g, nil
		}
	}
	ans, err := in.ask(ctx, tok)
	if err != nil {
		return nil, &unavailableError{err}
	}
	if active, _ := ans["active"].(bool); !active {
		return nil, invalidToken("the authorization server says the token is not active")
	}
	gr := &grant{
		issuer:   stringClaim(ans, "iss"),
		subject:  stringClaim(ans, "sub"),
		clientID: stringClaim(ans, "client_id"),
		scopes:   scopesOf(ans),
		jkt:      jktOf(ans),
		claims:   ans,
	}
	if aud, ok := ans["aud"]; ok && !audienceHas(aud, resource) {
		return nil, invalidToken("the token is for audience %v, not this gateway", aud)
	}
	until := now.Add(in.ttl)
	if exp, ok := ans["exp"].(float64); ok {
		gr.expires = time.Unix(int64(exp), 0)
		if now.After(gr.expires.Add(leeway)) {
			return nil, invalidToken("the token expired at %s", gr.expires.UTC().Format(time.RFC3339))
		}
		if gr.expires.Before(until) {
			until = gr.expires
		}
	}
	if nbf, ok := ans["nbf"].(float64); ok && time.Unix(int64(nbf), 0).After(now.Add(leeway)) {
		return nil, invalidToken("the token is not valid yet")
	}
	if in.cfg.CacheTTL >= 0 && until.After(now) {
		in.store(key, cached{gr, until}, now)
	}
	return gr, nil
}

// store keeps an answer; a full cache first drops the answers that ran
// out, then any one.
func (in *introspector) store(key [32]byte, c cached, now time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.cache) >= in.maxSize {
		for k, v := range in.cache {
			if now.After(v.until) {
				delete(in.cache, k)
			}
		}
		for k := range in.cache {
			if len(in.cache) < in.maxSize {
				break
			}
			delete(in.cache, k)
		}
	}
	in.cache[key] = c
}

// ask posts the token to the introspection endpoint.
func (in *introspector) ask(ctx context.Context, tok string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.f.timeout)
	defer cancel()
	form := url.Values{"token": {tok}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.cfg.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("introspection: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.cfg.ClientID), url.QueryEscape(in.cfg.ClientSecret))
	resp, err := in.f.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("introspection at %s: %w", in.cfg.URL, redactURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("introspection at %s: %s", in.cfg.URL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil || len(body) > maxDocumentBytes {
		return nil, fmt.Errorf("introspection at %s: reading the answer failed or it is over %d bytes", in.cfg.URL, maxDocumentBytes)
	}
	var ans map[string]any
	if err := json.Unmarshal(body, &ans); err != nil || ans == nil {
		return nil, fmt.Errorf("introspection at %s: the answer is not a JSON object", in.cfg.URL)
	}
	return ans, nil
}

// redactURLError keeps a transport error's cause without its request
// (whose body holds the token: it never does, but the URL is said once).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
