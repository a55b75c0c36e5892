package resourceserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// introspector asks the authorization server about tokens (RFC 7662) and
// keeps its answers about active tokens for at most their remaining life.
type introspector struct {
	cfg   Introspection
	f     *fetcher
	cache *grantCache
}

func newIntrospector(cfg *Introspection, f *fetcher) *introspector {
	ttl := cfg.CacheTTL
	if ttl == 0 {
		ttl = DefaultIntrospectTTL
	}
	return &introspector{cfg: *cfg, f: f, cache: newGrantCache(ttl, orInt(cfg.MaxEntries, DefaultIntrospectSize))}
}

// check returns the grant of an active token for resource.
func (in *introspector) check(ctx context.Context, tok string, key [32]byte, resource string, now time.Time, leeway time.Duration) (*grant, error) {
	if g := in.cache.get(key, now); g != nil {
		return g, nil
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
	// Without an aud naming the gateway, the token may be another
	// resource server's, replayed here by that server.
	if aud, ok := ans["aud"]; !ok || !audienceHas(aud, resource) {
		return nil, invalidToken("the token is for audience %v, not this gateway", aud)
	}
	if exp, ok := ans["exp"].(float64); ok {
		gr.expires = time.Unix(int64(exp), 0)
		if now.After(gr.expires.Add(leeway)) {
			return nil, invalidToken("the token expired at %s", gr.expires.UTC().Format(time.RFC3339))
		}
	}
	if nbf, ok := ans["nbf"].(float64); ok && time.Unix(int64(nbf), 0).After(now.Add(leeway)) {
		return nil, invalidToken("the token is not valid yet")
	}
	in.cache.put(key, gr, now)
	return gr, nil
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
