package resourceserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mcpadapter/mcpadapter/gateway/internal/subject"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A Guard checks the credential of every request to the handler it wraps.
// It is safe for concurrent use; it starts no goroutine.
type Guard struct {
	resource    string
	metadataURL string
	metaPath    string
	metadata    []byte
	scopes      []string
	algs        []jose.SignatureAlgorithm
	algNames    string
	leeway      time.Duration
	issuers     []string
	keys        map[string]*keySet
	apiKeys     *apiKeys
	intro       *introspector
	dpop        *dpopChecker
	verified    *grantCache
	log         *slog.Logger
}

// New returns a Guard, or an error listing every setting that cannot work.
func New(opts *Options) (*Guard, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("resourceserver: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	// Redirects are not followed: a redirect could take the
	// introspection request's client secret, or the key fetch, somewhere
	// the checks of secureURL never saw.
	hc := &http.Client{}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	f := &fetcher{hc: hc, timeout: orDuration(opts.Timeout, DefaultTimeout), log: log}
	names := opts.Algorithms
	if len(names) == 0 {
		names = defaultAlgorithms
	}
	g := &Guard{
		resource: opts.Resource,
		scopes:   slices.Clone(opts.Scopes),
		algNames: strings.Join(names, " "),
		leeway:   orDuration(opts.Leeway, DefaultLeeway),
		issuers:  slices.Clone(opts.Issuers),
		keys:     make(map[string]*keySet),
		apiKeys:  newAPIKeys(opts.APIKeys, opts.Scopes),
		log:      log,
	}
	ttl := opts.VerifiedTTL
	if ttl == 0 {
		ttl = DefaultVerifiedTTL
	}
	g.verified = newGrantCache(ttl, maxVerifiedEntries)
	for _, n := range names {
		g.algs = append(g.algs, jose.SignatureAlgorithm(n))
	}
	for _, iss := range opts.Issuers {
		g.keys[iss] = &keySet{
			issuer: iss, jwksURL: opts.JWKSURL, fetcher: f,
			minRefresh: orDuration(opts.JWKSMinRefresh, DefaultJWKSMinRefresh),
			maxAge:     orDuration(opts.JWKSMaxAge, DefaultJWKSMaxAge),
		}
	}
	if opts.Introspection != nil {
		g.intro = newIntrospector(opts.Introspection, f)
	}
	key := opts.DPoPNonceKey
	if opts.DPoPNonce && key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	seen := opts.ReplayStore
	if seen == nil {
		seen = newMemoryReplay(orInt(opts.MaxReplayEntries, DefaultReplayEntries))
	}
	g.dpop = newDPoPChecker(g.algs, orDuration(opts.DPoPProofMaxAge, DefaultDPoPProofMaxAge), g.leeway,
		seen, orInt(opts.MaxReplayPerPrincipal, DefaultReplayPerPrincipal), orDuration(opts.Timeout, DefaultTimeout), key)
	g.metadataURL, g.metaPath = metadataLocation(opts.Resource)
	md := map[string]any{
		"resource":                          opts.Resource,
		"bearer_methods_supported":          []string{"header"},
		"dpop_signing_alg_values_supported": names,
	}
	if len(opts.Issuers) > 0 {
		md["authorization_servers"] = opts.Issuers
	}
	if len(opts.Scopes) > 0 {
		md["scopes_supported"] = opts.Scopes
	}
	g.metadata, _ = json.Marshal(md)
	return g, nil
}

// metadataLocation is where the protected resource metadata of resource
// is (RFC 9728 section 3.1): the well-known prefix inserted between the
// host and the path.
func metadataLocation(resource string) (full, path string) {
	u, _ := url.Parse(resource)
	path = "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + path, path
}

// MetadataURL returns the address of the protected resource metadata,
// the resource_metadata of every challenge.
func (g *Guard) MetadataURL() string { return g.metadataURL }

// Handler returns next behind the Guard: the protected resource metadata
// at its well-known path, and every other request checked (Check); an
// accepted one reaches next with its go-sdk auth.TokenInfo on the
// context, a refused one gets 401, 403 or 503 with a challenge.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == g.metaPath {
			g.serveMetadata(w, r)
			return
		}
		ti, subj, err := g.check(r)
		if err != nil {
			g.refuse(w, r, err)
			return
		}
		// The token itself goes on, privately, to the gateway's token
		// exchanges (a server whose credential is exchanged per user).
		r = r.WithContext(subject.With(r.Context(), subj))
		if g.dpop.nonces != nil && r.Header.Get("DPoP") != "" {
			// The nonce to use next, before the one the client has runs out.
			w.Header().Set("DPoP-Nonce", g.dpop.nonce(time.Now()))
		}
		withTokenInfo(next, ti).ServeHTTP(w, r)
	})
}

// withTokenInfo runs next with ti on the request's context, through
// go-sdk's auth.RequireBearerToken (the one way to put it where go-sdk
// and the gateway look), whose own check is ti itself.
func withTokenInfo(next http.Handler, ti *auth.TokenInfo) http.Handler {
	verified := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) { return ti, nil }
	inner := auth.RequireBearerToken(verified, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: 365 * 24 * time.Hour})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			// A DPoP-bound token, or an API key in another header: go-sdk
			// reads only the Bearer scheme.
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer verified")
		}
		inner.ServeHTTP(w, r)
	})
}

func (g *Guard) serveMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(g.metadata)
}

// Check checks the credential of r and returns what it grants as a go-sdk
// auth.TokenInfo. The error is an *Error saying the status, the challenge
// and the reason.
func (g *Guard) Check(r *http.Request) (*auth.TokenInfo, error) {
	ti, _, err := g.check(r)
	return ti, err
}

// check is Check, which also returns the token when it is an access token
// its holder may have exchanged (RFC 8693) by the gateway: a bearer
// token of a trusted issuer, not an API key of the gateway's own (a secret
// no authorization server may see) nor a DPoP-bound token (whose proof
// the gateway cannot make).
func (g *Guard) check(r *http.Request) (_ *auth.TokenInfo, exchangeable string, _ error) {
	now := time.Now()
	scheme, tok, err := credentialOf(r)
	if err != nil {
		return nil, "", err
	}
	key := tokenKey(tok)
	if gr := g.apiKeys.match(key); gr != nil {
		if scheme != "bearer" {
			return nil, "", invalidToken("an API key goes in the Bearer scheme")
		}
		ti, err := g.accept(gr)
		return ti, "", err
	}
	gr, err := g.verifyToken(r.Context(), tok, key, now)
	if err != nil {
		return nil, "", err
	}
	switch {
	case gr.jkt == "" && scheme == "dpop":
		return nil, "", &Error{Status: http.StatusUnauthorized, Code: "invalid_token", DPoP: true, Reason: "a token not bound to a DPoP key, sent with the DPoP scheme"}
	case gr.jkt != "" && scheme != "dpop":
		return nil, "", &Error{Status: http.StatusUnauthorized, Code: "invalid_token", DPoP: true, Reason: "a DPoP-bound token, sent as a bearer token"}
	case gr.jkt != "":
		if err := g.dpop.check(r, g.resource, g.principalOf(gr), tok, gr.jkt, now); err != nil {
			return nil, "", err
		}
		ti, err := g.accept(gr)
		return ti, "", err
	}
	ti, err := g.accept(gr)
	if err != nil {
		return nil, "", err
	}
	return ti, tok, nil
}

// verifyToken checks a JWT of a trusted issuer, or asks the introspection
// endpoint about any other token.
func (g *Guard) verifyToken(ctx context.Context, tok string, key [32]byte, now time.Time) (*grant, error) {
	var gr *grant
	var err error
	if gr = g.verified.get(key, now); gr != nil && gr.keys.gen.Load() == gr.gen {
		return gr, nil
	}
	isJWT := false
	if jws, iss := g.parseJWS(tok); jws != nil && g.keys[iss] != nil {
		gr, err = g.verifyJWT(ctx, jws, iss, now)
		isJWT = true
	} else if g.intro != nil {
		gr, err = g.intro.check(ctx, tok, key, g.resource, now, g.leeway)
	} else if len(g.keys) > 0 {
		if looksLikeJWS(tok) {
			_, perr := jwt.ParseSigned(tok, g.algs)
			if perr != nil {
				return nil, invalidToken("a JWT this gateway cannot verify: %v", perr)
			}
			return nil, invalidToken("a JWT of an issuer this gateway does not trust")
		}
		return nil, invalidToken("not a JWT")
	} else {
		return nil, invalidToken("not an API key of this gateway")
	}
	if err != nil {
		var ue *unavailableError
		if errors.As(err, &ue) {
			return nil, &Error{Status: http.StatusServiceUnavailable, Reason: err.Error(), err: err}
		}
		return nil, err
	}
	gr.principal = g.principalOf(gr)
	if gr.principal == "" {
		return nil, invalidToken("the token names no subject (sub) nor client (client_id)")
	}
	if isJWT {
		g.verified.put(key, gr, now)
	}
	return gr, nil
}

// parseJWS parses a token that has the shape of a JWS with the Guard's
// algorithms and returns it with its (unverified) issuer, or nil.
func (g *Guard) parseJWS(tok string) (*jwt.JSONWebToken, string) {
	if len(g.keys) == 0 || !looksLikeJWS(tok) {
		return nil, ""
	}
	jws, err := jwt.ParseSigned(tok, g.algs)
	if err != nil {
		return nil, ""
	}
	return jws, unverifiedIssuer(jws)
}

// principalOf names whom a grant is for: its sub, or "client:" and its
// client_id for a token no user holds (so that a client is never taken
// for a user whose sub is its id), with the issuer when several are
// trusted.
func (g *Guard) principalOf(gr *grant) string {
	p := gr.subject
	if p == "" && gr.clientID != "" {
		p = "client:" + gr.clientID
	}
	if p == "" {
		return ""
	}
	if len(g.issuers) > 1 && gr.issuer != "" {
		return gr.issuer + "#" + p
	}
	return p
}

// accept checks a grant's scopes and makes its TokenInfo.
func (g *Guard) accept(gr *grant) (*auth.TokenInfo, error) {
	for _, s := range g.scopes {
		if !slices.Contains(gr.scopes, s) {
			return nil, &Error{Status: http.StatusForbidden, Code: "insufficient_scope", Reason: fmt.Sprintf("principal %q lacks scope %q", gr.principal, s)}
		}
	}
	return &auth.TokenInfo{UserID: gr.principal, Scopes: gr.scopes, Expiration: gr.expires, Extra: gr.claims}, nil
}

// credentialOf returns the scheme ("bearer" or "dpop") and the token of
// the request's one Authorization header.
func credentialOf(r *http.Request) (scheme, tok string, err error) {
	hs := r.Header.Values("Authorization")
	if len(hs) == 0 {
		return "", "", &Error{Status: http.StatusUnauthorized, Reason: "no credential"}
	}
	if len(hs) > 1 {
		return "", "", &Error{Status: http.StatusBadRequest, Code: "invalid_request", Reason: "more than one Authorization header"}
	}
	s, t, ok := strings.Cut(strings.TrimSpace(hs[0]), " ")
	t = strings.TrimSpace(t)
	s = strings.ToLower(s)
	if !ok || t == "" || (s != "bearer" && s != "dpop") {
		return "", "", &Error{Status: http.StatusUnauthorized, Reason: "an Authorization header that is neither Bearer nor DPoP"}
	}
	if len(t) > 16<<10 {
		return "", "", invalidToken("a token of %d bytes", len(t))
	}
	return s, t, nil
}

// An Error is a refused request: its status, the OAuth error code of its
// challenge ("" for none), and the reason, which is logged and names no
// secret.
type Error struct {
	Status int
	Code   string
	// DPoP makes the challenge a DPoP one (a DPoP-bound token or its
	// proof was refused).
	DPoP   bool
	Reason string
	err    error
	retry  time.Duration // Retry-After of a 429
}

func (e *Error) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Reason)
	}
	return fmt.Sprintf("%d: %s", e.Status, e.Reason)
}

// Unwrap returns the cause of a 503.
func (e *Error) Unwrap() error { return e.err }

func invalidToken(format string, args ...any) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Reason: fmt.Sprintf(format, args...)}
}

// refuse answers a refused request with its status and challenge, and
// logs why.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Reason: err.Error()}
	}
	level := slog.LevelInfo
	if e.Status == http.StatusServiceUnavailable {
		level = slog.LevelWarn
	}
	g.log.Log(r.Context(), level, "resourceserver: request refused", "status", e.Status, "error", e.Code, "reason", e.Reason, "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		w.Header().Add("WWW-Authenticate", g.challenge("Bearer", e))
		if e.DPoP || g.dpop.nonces != nil {
			w.Header().Add("WWW-Authenticate", g.challenge("DPoP", e))
		}
		if e.Code == "use_dpop_nonce" {
			w.Header().Set("DPoP-Nonce", g.dpop.nonce(time.Now()))
		}
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "5")
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(int(max(e.retry, time.Second)/time.Second)))
	}
	msg := http.StatusText(e.Status)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	http.Error(w, msg, e.Status)
}

// challenge is one WWW-Authenticate challenge: the scheme, the error
// (only where it belongs: a Bearer challenge does not carry a DPoP
// error, nor a DPoP one a Bearer error), the scopes and the metadata.
func (g *Guard) challenge(scheme string, e *Error) string {
	var ps []string
	code := e.Code
	if scheme == "Bearer" && e.DPoP || scheme == "DPoP" && !e.DPoP && code != "insufficient_scope" {
		code = ""
	}
	if code != "" {
		ps = append(ps, "error="+strconv.Quote(code))
		if e.Status != http.StatusForbidden {
			ps = append(ps, "error_description="+strconv.Quote(describe(code)))
		}
	}
	if len(g.scopes) > 0 {
		ps = append(ps, "scope="+strconv.Quote(strings.Join(g.scopes, " ")))
	}
	ps = append(ps, "resource_metadata="+strconv.Quote(g.metadataURL))
	if scheme == "DPoP" {
		ps = append(ps, "algs="+strconv.Quote(g.algNames))
	}
	return scheme + " " + strings.Join(ps, ", ")
}

// describe is the error_description of a challenge: fixed text, so that
// nothing of the token is echoed.
func describe(code string) string {
	switch code {
	case "invalid_token":
		return "the access token is not valid for this resource"
	case "invalid_dpop_proof":
		return "the DPoP proof is not valid"
	case "use_dpop_nonce":
		return "the DPoP proof needs the nonce in DPoP-Nonce"
	}
	return code
}

// Principal returns the principal of a bearer access token, checked as
// Check checks a request's (signature, issuer, audience, expiry, scopes):
// the same principal a request with the token would have. A gateway's
// sign-in pages use it to know the user of a browser that signed in at
// the gateway's authorization server (gateway.SignInLogin.Verify).
func (g *Guard) Principal(ctx context.Context, token string) (string, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, g.resource, nil)
	if err != nil {
		return "", err
	}
	r.Header.Set("Authorization", "Bearer "+token)
	ti, err := g.Check(r)
	if err != nil {
		return "", err
	}
	return ti.UserID, nil
}
