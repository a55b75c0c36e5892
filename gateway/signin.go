package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Per-user sign-in to a server through the gateway. A server whose "auth"
// is a sign-in (Server.SignIn, or "type": "signin" in its config entry)
// gets each principal's requests with that principal's own token, which
// the principal got by signing in to the server's authorization server in
// a browser (an mcpadapter.WebSignIn whose redirect URL is the gateway's
// callback). A principal with no token gets a URL-mode elicitation (see
// signInAnswer): the URL is the gateway's start page, never the
// authorization server's, and the start page lets the browser on only
// when the user of that browser, signed in at the gateway's own
// authorization server (SignInOptions.Login) or known to the deployment
// (SignInOptions.Authenticate), is the principal the question was made
// for (signin_http.go). Listings are made for no principal, with a client
// credentials token of the gateway's own at the server's issuer.

// CodeSignInRequired is the JSON-RPC error code of a request whose
// principal must sign in to the server first, for a client that cannot
// be asked with a URL-mode elicitation: the error's data holds "url",
// the page to open in the user's browser, and "server".
const CodeSignInRequired = -32017

// SignIn is a server's sign-in per user through the gateway.
type SignIn struct {
	// Issuer is the server's authorization server, the only one the
	// client secret and the codes are sent to. Required.
	Issuer string
	// ClientID and ClientSecret are the gateway's client there, with the
	// gateway's callback (SignInOptions.URL + "/oauth/callback") among
	// its redirect URIs. The secret also gets the gateway's own token
	// (client credentials) for the listings. Both required.
	ClientID, ClientSecret string
	// Scopes are asked for in addition to those the server names.
	Scopes []string
}

// SignInOptions are the gateway's sign-in pages, which every server with
// a SignIn needs. Mount SignInHandler at URL's path + "/oauth/", outside
// the resource server's Guard (a browser carries no bearer token).
type SignInOptions struct {
	// URL is the gateway's public base URL (https; http only on a loopback
	// host), without the "/oauth/" part: the pages are URL+"/oauth/start",
	// URL+"/oauth/login" and URL+"/oauth/callback". Required.
	URL string
	// Key seals the sign-ins' states, the links and the cookies: 32
	// random bytes, the same on every replica, secret. Required.
	Key []byte
	// Store keeps the users' tokens, under mcpadapter.TokenKey(server
	// URL, principal), and the sign-ins used; nil means in memory.
	// Replicas share one (redisstore, pgstore TokenStore): a sign-in
	// started on one completes on any other, and tokens are refreshed
	// under its lock.
	Store mcpadapter.TokenStore
	// Login identifies the user of a browser by a sign-in at the
	// gateway's own authorization server. Exactly one of Login and
	// Authenticate is set.
	Login *SignInLogin
	// Authenticate returns the principal of a browser's request to the
	// sign-in pages from the deployment's own web session ("" for none),
	// the same principal its MCP requests have.
	Authenticate func(r *http.Request) (string, error)
	// TTL bounds a sign-in from the question to the callback, and the
	// browser's session at the pages; zero means 10 minutes.
	TTL time.Duration
	// HTTPClient sends the requests to the authorization servers; nil
	// means a plain client.
	HTTPClient *http.Client
}

// SignInLogin is the gateway's client at its own authorization server,
// which the sign-in pages use to learn who the browser's user is.
type SignInLogin struct {
	// Issuer is the authorization server whose access tokens the
	// gateway takes; ClientID and ClientSecret its client there, with
	// SignInOptions.URL + "/oauth/login" among its redirect URIs.
	Issuer, ClientID, ClientSecret string
	// Resource is the gateway's resource URL, asked for as the token's
	// audience. Required.
	Resource string
	// Scopes are asked for (those a token of the gateway needs).
	Scopes []string
	// Verify returns the principal of an access token Issuer gave, as the
	// gateway's resource server sees it (resourceserver.Guard.Principal).
	// Required.
	Verify func(ctx context.Context, token string) (string, error)
}

// defaultSignInTTL is SignInOptions.TTL's default.
const defaultSignInTTL = 10 * time.Minute

// check reports settings that cannot work.
func (o *SignInOptions) check() error {
	if o.URL == "" {
		return errors.New("SignInOptions.URL is empty: give the gateway's public base URL")
	}
	if err := webURL(o.URL); err != nil {
		return fmt.Errorf("SignInOptions.URL %q: %w", o.URL, err)
	}
	if len(o.Key) != 32 {
		return fmt.Errorf("SignInOptions.Key has %d bytes: give 32 random bytes, the same on every replica", len(o.Key))
	}
	if (o.Login == nil) == (o.Authenticate == nil) {
		return errors.New("SignInOptions: set exactly one of Login and Authenticate (how the sign-in pages know the browser's user)")
	}
	if l := o.Login; l != nil {
		switch {
		case l.Issuer == "" || l.ClientID == "":
			return errors.New("SignInOptions.Login: Issuer and ClientID are required")
		case l.Resource == "":
			return errors.New("SignInOptions.Login.Resource is empty: give the gateway's resource URL")
		case l.Verify == nil:
			return errors.New("SignInOptions.Login.Verify is nil: give the resource server's check (resourceserver.Guard.Principal)")
		}
		if err := webURL(l.Issuer); err != nil {
			return fmt.Errorf("SignInOptions.Login.Issuer %q: %w", l.Issuer, err)
		}
	}
	if o.TTL < 0 {
		return fmt.Errorf("SignInOptions.TTL %v is negative", o.TTL)
	}
	return nil
}

// subKey derives the key of one use from the sign-in key.
func subKey(key []byte, use string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcpadapter gateway sign-in\x00" + use))
	return m.Sum(nil)
}

// signInOf returns the *mcpadapter.SignInRequiredError err holds, or nil.
func signInOf(err error) *mcpadapter.SignInRequiredError {
	var sr *mcpadapter.SignInRequiredError
	if errors.As(err, &sr) {
		return sr
	}
	return nil
}

// signInSetup makes the WebSignIn of s, a server whose auth is a sign-in
// (Server.SignIn, or a config entry's "signin" auth, which it takes out
// of the entry): co's Auth becomes it. It returns s unchanged for any
// other server.
func (u *upstream) signInSetup(s Server, endpoint string, co *mcpadapter.ClientOptions) (Server, error) {
	si := s.SignIn
	if s.Config != nil {
		if a := s.Config.Auth; a != nil && a.Grant != nil && a.Grant.Type == "signin" {
			gr := a.Grant
			si = &SignIn{Issuer: gr.Issuer, ClientID: gr.ClientID, ClientSecret: gr.ClientSecret, Scopes: gr.Scopes}
			sc := *s.Config
			sc.Auth = nil
			s.Config = &sc
		}
	}
	if si == nil {
		return s, nil
	}
	pg := u.g.pages
	switch {
	case pg == nil:
		return s, errors.New(`a sign-in per user ("signin") needs the gateway's sign-in pages: set Options.SignIn (serve: --signin-url and --signin-key-env)`)
	case !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://"):
		return s, errors.New(`a sign-in per user ("signin") needs an HTTP server: a stdio or in-process server has one connection for everyone`)
	case si.ClientSecret == "":
		return s, errors.New(`a sign-in per user ("signin") needs "clientSecret": the gateway lists the server's tools with a client credentials token of its own`)
	}
	own, err := mcpadapter.NewTokenExchanger(&mcpadapter.TokenExchange{Issuer: si.Issuer, ClientID: si.ClientID,
		ClientSecret: si.ClientSecret, Resource: endpoint, Scopes: si.Scopes})
	if err != nil {
		return s, err
	}
	ownCreds := newPrincipalCreds(s.Name, own)
	w, err := mcpadapter.NewWebSignIn(&mcpadapter.WebSignInOptions{
		Issuer: si.Issuer, ClientID: si.ClientID, ClientSecret: si.ClientSecret, Scopes: si.Scopes,
		RedirectURL: pg.base + "/oauth/callback", StateKey: subKey(pg.opts.Key, "state"), StateTTL: pg.ttl,
		Store: pg.opts.Store, HTTPClient: pg.opts.HTTPClient, Logger: u.g.log.With("server", s.Name),
		Unattended: func(ctx context.Context) (string, error) { return ownCreds.ownToken(ctx, time.Now()) },
	})
	if err != nil {
		return s, err
	}
	u.web, u.webURL = w, endpoint
	co.Auth = w
	return s, nil
}

// signInAnswer returns what the client of o gets for a request to u that
// failed because its principal must sign in (sr): for a client that
// takes URL-mode elicitations, the question in its era's form (a
// 2026-07-28 client's input_required result, whose retry makes the call
// again; a handshake-era client's -32042 URL elicitation required error,
// after which it makes the call again itself, and which its session is
// told the end of, notifications/elicitation/complete, when the sign-in
// completes on this replica); for any other client a
// CodeSignInRequired error with the URL in its data. call says whether
// the request is a tool call (only a tool call's result can ask).
func (g *Gateway) signInAnswer(o *origin, u *upstream, sr *mcpadapter.SignInRequiredError, call bool) (*mcp.CallToolResult, error) {
	link, id, err := g.pages.link(sr.Principal, u.name, sr.URL)
	if err != nil {
		g.log.Warn("no sign-in link for a principal", "server", u.name, "principal", sr.Principal, "err", err)
		return nil, &jsonrpc.Error{Code: CodeUpstreamAuth, Message: fmt.Sprintf("server %q: you must sign in there, and the gateway could not make the link: %v", u.name, err)}
	}
	q := &mcp.ElicitParams{Mode: "url", URL: link, ElicitationID: id,
		Message: fmt.Sprintf("Sign in to %s so that the gateway can use it for you, then make the call again.", u.name)}
	urlOK := o != nil && o.caps != nil && o.caps.Elicitation != nil && o.caps.Elicitation.URL != nil
	switch {
	case urlOK && o.modern && call:
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{mcpadapter.SignInKey: q}, RequestState: statePrefix + signInState}, nil
	case urlOK:
		if _, ss := o.current(); ss != nil && !o.modern {
			// Told when the sign-in completes here (signInCompleted).
			g.signins.add(&signInWait{id: id, principal: sr.Principal, server: u.name, ss: ss, expires: time.Now().Add(g.pages.ttl)})
		}
		return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{q})
	}
	data, _ := json.Marshal(map[string]string{"url": link, "server": u.name, "elicitationId": id})
	return nil, &jsonrpc.Error{Code: CodeSignInRequired, Data: data,
		Message: fmt.Sprintf("server %q: sign in there first: open the URL in this error's data (url) in your browser, then make the request again", u.name)}
}

// signInNeeded is the error of a forwarded call whose principal must sign
// in: callTool turns it into the question (signInAnswer).
type signInNeeded struct {
	sr *mcpadapter.SignInRequiredError
}

func (e *signInNeeded) Error() string { return e.sr.Error() }

// signInState is the request state (behind statePrefix) of a sign-in
// question: its retry makes the call again.
const signInState = "sign-in"

// signInDeclined returns the result of a retry of a sign-in question
// whose answer declined or cancelled it, or nil when it was accepted (or
// not answered: the call is made again, and asks again if need be).
func signInDeclined(server string, responses mcp.InputResponseMap) *mcp.CallToolResult {
	r, ok := responses[mcpadapter.SignInKey].(*mcp.ElicitResult)
	if !ok || r == nil || r.Action == "accept" {
		return nil
	}
	return signInRefused(server, r.Action)
}

// newElicitationID returns a fresh elicitation ID.
func newElicitationID() string { return rand.Text() }
