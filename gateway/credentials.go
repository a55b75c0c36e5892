package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway/internal/subject"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/oauth2"
)

// Credentials to servers per principal. A server whose "auth" is a
// token exchange (Server.Exchange, or "type": "token_exchange" in its
// config entry) gets each principal's requests with a token the
// configured authorization server issued for that principal: the access
// token the client presented to the gateway (verified by its
// resourceserver.Guard, which hands it on privately) is exchanged (RFC
// 8693) for a token for the server, kept in memory per principal and per
// presented token until it expires. The client's own token never goes to
// the server, and the exchange's secret and the client's token go to the
// configured issuer only. Each principal has a connection of its own to
// such a server (mcpadapter.CallIdentity); what the gateway lists there
// for everyone is listed with a token of the gateway's own (the client
// credentials grant at the same issuer), made for no principal.
//
// With TokenExchange.IDJAG ("grant": "id-jag") the issuer is the identity
// provider: it exchanges the principal's token for an ID-JAG naming the
// server's authorization server (the configured one; a server whose
// metadata names another is refused) and resource, which the gateway
// checks and presents there in a JWT bearer grant for the principal's
// token; the gateway's own is the client credentials grant there.

// CodeUpstreamAuth is the JSON-RPC error code of a request the gateway
// could not make because it got no credential for the principal at the
// server (a token exchange refused or failed).
const CodeUpstreamAuth = -32016

// maxExchanged bounds the exchanged tokens a server's credentials keep;
// expired ones are dropped first, then the oldest.
const maxExchanged = 4096

// exchangeSkew renews an exchanged token this long before it expires.
const exchangeSkew = 30 * time.Second

// principalCreds are the credentials per principal of one server.
type principalCreds struct {
	server string
	x      *mcpadapter.TokenExchanger

	max    int // the most byKey keeps (maxExchanged)
	mu     sync.Mutex
	byKey  map[credKey]*exchanged // by principal and presented token
	latest map[string]*exchanged  // each principal's last exchanged token
	own    *exchanged             // the gateway's own token, for no principal
}

// credKey names an exchanged token: its principal and the hash of the
// token the principal presented.
type credKey struct {
	principal string
	subject   [32]byte
}

// exchangeTimeout bounds one exchange (or grant of the gateway's own
// token) at the issuer, whoever waits for it.
const exchangeTimeout = 30 * time.Second

// exchanged is one token the issuer gave, made once however many ask at
// once: lock (a semaphore of one, so that a request waiting for another's
// exchange still ends with its own context) is held while it is made.
type exchanged struct {
	lock  chan struct{}
	tok   *oauth2.Token
	made  time.Time
	valid bool
}

func newExchanged() *exchanged { return &exchanged{lock: make(chan struct{}, 1)} }

// acquire takes e's lock, or returns the cause of ctx's end first.
func (e *exchanged) acquire(ctx context.Context) error {
	select {
	case e.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// tryAcquire takes e's lock if it is free.
func (e *exchanged) tryAcquire() bool {
	select {
	case e.lock <- struct{}{}:
		return true
	default:
		return false
	}
}

func (e *exchanged) release() { <-e.lock }

func (e *exchanged) fresh(now time.Time) bool {
	return e.valid && (e.tok.Expiry.IsZero() || now.Add(exchangeSkew).Before(e.tok.Expiry))
}

// newPrincipalCreds returns the credentials of server made with x.
func newPrincipalCreds(server string, x *mcpadapter.TokenExchanger) *principalCreds {
	return &principalCreds{server: server, x: x, max: maxExchanged, byKey: make(map[credKey]*exchanged), latest: make(map[string]*exchanged)}
}

// auth is the server's Auth: each request's principal's token.
func (c *principalCreds) auth() mcpadapter.Auth { return mcpadapter.PrincipalToken(c.token) }

// token returns the token of a request of principal made with ctx: the
// one exchanged for the token ctx carries (exchanged now when there is
// none still valid), else (a connection's handshake or event stream,
// made with no request's token) the principal's last one still valid;
// for no principal, the gateway's own.
func (c *principalCreds) token(ctx context.Context, principal string) (string, error) {
	now := time.Now()
	if principal == "" {
		return c.ownToken(ctx, now)
	}
	if s := subject.From(ctx); s != "" {
		return c.exchange(ctx, principal, s)
	}
	c.mu.Lock()
	e := c.latest[principal]
	c.mu.Unlock()
	if e == nil {
		return "", fmt.Errorf("no token exchanged for principal %q yet", principal)
	}
	if err := e.acquire(ctx); err != nil {
		return "", err
	}
	defer e.release()
	if !e.fresh(now) {
		return "", fmt.Errorf("the token exchanged for principal %q has expired or was refused", principal)
	}
	return e.tok.AccessToken, nil
}

// ownToken returns the gateway's own token, getting a new one when it
// has expired.
func (c *principalCreds) ownToken(ctx context.Context, now time.Time) (string, error) {
	c.mu.Lock()
	if c.own == nil {
		c.own = newExchanged()
	}
	e := c.own
	c.mu.Unlock()
	if err := e.acquire(ctx); err != nil {
		return "", err
	}
	defer e.release()
	if !e.fresh(now) {
		ctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
		defer cancel()
		tok, err := c.x.ClientToken(ctx)
		if err != nil {
			return "", err
		}
		e.tok, e.made, e.valid = tok, now, true
	}
	return e.tok.AccessToken, nil
}

// ensure makes sure principal has a token exchanged for the token of
// ctx, exchanging it now when it has none still valid.
func (c *principalCreds) ensure(ctx context.Context, principal string) error {
	s := subject.From(ctx)
	if s == "" {
		return errors.New("the request carries no access token the gateway may exchange: the gateway must sit behind its resourceserver.Guard, and the client's token be a bearer token of a trusted issuer (not an API key, not DPoP-bound)")
	}
	_, err := c.exchange(ctx, principal, s)
	return err
}

// exchange returns the token exchanged for principal's subject token s,
// exchanging it now when there is none still valid.
func (c *principalCreds) exchange(ctx context.Context, principal, s string) (string, error) {
	k := credKey{principal, sha256.Sum256([]byte(s))}
	now := time.Now()
	c.mu.Lock()
	e := c.byKey[k]
	if e == nil {
		c.evict(now)
		e = newExchanged()
		c.byKey[k] = e
	}
	c.mu.Unlock()
	if err := e.acquire(ctx); err != nil {
		return "", err
	}
	defer e.release()
	if e.fresh(now) {
		return e.tok.AccessToken, nil
	}
	ctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	tok, err := c.x.Exchange(ctx, s)
	if err != nil {
		// Nothing is kept of an exchange that gave no token.
		e.valid = false
		c.mu.Lock()
		if c.byKey[k] == e {
			c.drop(k, e)
		}
		c.mu.Unlock()
		return "", err
	}
	e.tok, e.made, e.valid = tok, now, true
	c.mu.Lock()
	if c.byKey[k] == e { // not dropped meanwhile: latest stays within byKey
		c.latest[principal] = e
	}
	c.mu.Unlock()
	return tok.AccessToken, nil
}

// refused forgets sent, a token the server answered 401 to (revoked
// before it expires), for principal ("" for the gateway's own) and the
// subject token on ctx, if any, so that the next request gets a new one.
func (c *principalCreds) refused(ctx context.Context, principal, sent string) {
	var es []*exchanged
	c.mu.Lock()
	switch {
	case principal == "":
		es = append(es, c.own)
	default:
		if s := subject.From(ctx); s != "" {
			es = append(es, c.byKey[credKey{principal, sha256.Sum256([]byte(s))}])
		}
		if e := c.latest[principal]; e != nil {
			es = append(es, e)
		}
	}
	c.mu.Unlock()
	for _, e := range es {
		if e == nil {
			continue
		}
		if e.acquire(ctx) != nil {
			return
		}
		if e.valid && e.tok.AccessToken == sent {
			e.valid = false
		}
		e.release()
	}
}

// evict drops expired tokens, and the oldest when there are too many.
// c.mu is held.
func (c *principalCreds) evict(now time.Time) {
	if len(c.byKey) < c.max {
		return
	}
	var oldest credKey
	var oldestAt time.Time
	for k, e := range c.byKey {
		if !e.tryAcquire() {
			continue // being made
		}
		gone := !e.fresh(now) // expired, refused, or never made
		made := e.made
		e.release()
		if gone {
			c.drop(k, e)
			continue
		}
		if oldestAt.IsZero() || made.Before(oldestAt) {
			oldest, oldestAt = k, made
		}
	}
	if len(c.byKey) >= c.max && !oldestAt.IsZero() {
		c.drop(oldest, c.byKey[oldest])
	}
}

// drop forgets the token of k. c.mu is held.
func (c *principalCreds) drop(k credKey, e *exchanged) {
	delete(c.byKey, k)
	if c.latest[k.principal] == e {
		delete(c.latest, k.principal)
	}
}

// reauth is the base transport of a server whose credential is per
// principal, under the client's layers: a request the server answers 401
// (a token revoked before it expires) has its token forgotten, and is
// sent again, once, with a new one when the request carries the subject
// token to exchange (or is the gateway's own) and its body can be read
// again. A request to another origin carries no token of ours and is not
// retried.
type reauth struct {
	next http.RoundTripper
	c    *principalCreds
	// own is the transport the gateway made for the server (no
	// HTTPClient in its options), closed with it; nil otherwise.
	own *http.Transport
}

func (t *reauth) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	sent, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || sent == "" {
		return resp, nil
	}
	ctx := req.Context()
	principal := ""
	if id := mcpadapter.CallIdentityFrom(ctx); id != nil {
		principal = id.Principal
	}
	t.c.refused(ctx, principal, sent)
	if principal != "" && subject.From(ctx) == "" || req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil
	}
	tok, terr := t.c.token(ctx, principal)
	if terr != nil || tok == sent {
		return resp, nil
	}
	again := req.Clone(ctx)
	if req.GetBody != nil {
		if again.Body, terr = req.GetBody(); terr != nil {
			return resp, nil
		}
	}
	again.Header.Set("Authorization", "Bearer "+tok)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return t.next.RoundTrip(again)
}

// closeIdle closes the idle connections of the transport the gateway
// made for the server, if it did.
func (t *reauth) closeIdle() {
	if t != nil && t.own != nil {
		t.own.CloseIdleConnections()
	}
}

// as returns the context to make a request of ctx's principal to u with:
// for a server whose credential is per principal, the principal's
// identity (its own connection, its own token), once its token is
// exchanged; for any other server, ctx itself.
func (u *upstream) as(ctx context.Context) (context.Context, error) {
	if u.creds == nil && u.web == nil {
		return ctx, nil
	}
	p := PrincipalFrom(ctx)
	if p == "" {
		return nil, &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q takes requests for an authenticated principal only: the gateway has none for this request", u.name)}
	}
	if u.web != nil {
		// The principal's token, or a sign-in question (signInAnswer).
		return mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p}), nil
	}
	if err := u.creds.ensure(ctx, p); err != nil {
		u.g.log.Warn("no credential for a principal at a server", "server", u.name, "principal", p, "err", err)
		return nil, &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q: the gateway got no credential for you there: %v", u.name, err)}
	}
	return mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p}), nil
}

// perPrincipal sets up the credentials per principal of s, if it has
// them (Server.Exchange, or a config entry's "token_exchange" auth): co's
// Auth becomes each principal's token, and the config entry loses its
// "auth" (the exchange is the gateway's, not the server's client's).
func (u *upstream) perPrincipal(s Server, co *mcpadapter.ClientOptions) (Server, error) {
	x, endpoint := s.Exchange, ""
	switch {
	case s.Config != nil:
		endpoint = s.Config.URL
		if a := s.Config.Auth; a != nil && a.Grant != nil && a.Grant.Type == "token_exchange" {
			gr := a.Grant
			x = &mcpadapter.TokenExchange{Issuer: gr.Issuer, ClientID: gr.ClientID, ClientSecret: gr.ClientSecret,
				Audience: gr.Audience, Resource: gr.Resource, Scopes: gr.Scopes}
			if gr.Grant == "id-jag" {
				x.IDJAG = &mcpadapter.IDJAGExchange{AuthorizationServer: gr.AuthorizationServer, ClientID: gr.ASClientID, ClientSecret: gr.ASClientSecret}
			}
			sc := *s.Config
			sc.Auth = nil
			s.Config = &sc
		}
	default:
		switch t := s.Target.(type) {
		case string:
			endpoint = t
		case *url.URL:
			endpoint = t.String()
		}
	}
	if x == nil {
		return u.signInSetup(s, endpoint, co)
	}
	if s.SignIn != nil {
		return s, errors.New("a server has one credential per principal: a token exchange or a sign-in, not both")
	}
	if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
		return s, errors.New(`a credential per principal ("token_exchange") needs an HTTP server: a stdio or in-process server has one connection for everyone`)
	}
	cfg := *x
	if cfg.Resource == "" {
		cfg.Resource = endpoint
	}
	ex, err := mcpadapter.NewTokenExchanger(&cfg)
	if err != nil {
		return s, err
	}
	u.creds = newPrincipalCreds(s.Name, ex)
	co.Auth = u.creds.auth()
	hc := &http.Client{}
	if co.HTTPClient != nil {
		*hc = *co.HTTPClient
	}
	u.reauth = &reauth{next: hc.Transport, c: u.creds}
	if hc.Transport == nil {
		own := http.DefaultTransport.(*http.Transport).Clone()
		own.MaxIdleConnsPerHost = 64 // as the client's own transport keeps
		u.reauth.next, u.reauth.own = own, own
	}
	hc.Transport = u.reauth
	co.HTTPClient = hc
	u.g.exchanges.Store(true)
	return s, nil
}
