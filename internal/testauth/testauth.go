// Package testauth is an OAuth 2.1 authorization server and an MCP server
// protected by it, on one loopback httptest server, for tests of the MCP
// authorization flow: protected resource metadata (RFC 9728), authorization
// server metadata (RFC 8414), dynamic client registration (RFC 7591), the
// authorization code grant with PKCE (S256), refresh tokens, and scope
// step-up (403 insufficient_scope). The "user" always consents, unless
// Options.Deny is set.
package testauth

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Scopes the server knows. BaseScope lets a client use the MCP endpoint;
// AdminScope is needed for Options.AdminTool.
const (
	BaseScope  = "mcp:tools"
	AdminScope = "mcp:admin"
)

// Options configures a Server.
type Options struct {
	// MCP is the MCP server behind the protected endpoint.
	MCP *mcp.Server
	// Stateful serves MCP with a session per connection (go-sdk's
	// default), so that the server may send requests outside a call's
	// response; otherwise statelessly.
	Stateful bool
	// TokenTTL is the access token lifetime; zero means one hour.
	TokenTTL time.Duration
	// AdminTool, if set, is a tool whose calls need AdminScope: without it
	// the server answers 403 insufficient_scope (step-up).
	AdminTool string
	// ForbidMethod, if set, is a JSON-RPC method (such as
	// "server/discover") whose requests are answered 403
	// insufficient_scope, asking for AdminScope, whatever scopes the
	// token has: a policy no sign-in satisfies.
	ForbidMethod string
	// ForbidTool, if set, is a tool whose calls are answered with a plain
	// 403 (no insufficient_scope): the server's refusal, which no sign-in
	// or grant changes.
	ForbidTool string
	// Deny makes the authorization endpoint refuse (error=access_denied).
	Deny bool
	// ClientID and ClientSecret, if set, are a preregistered client.
	ClientID, ClientSecret string
	// NoRegistration leaves registration_endpoint out of the metadata.
	NoRegistration bool
	// NoPKCE leaves code_challenge_methods_supported out of the metadata
	// (a server for the grants that need no user).
	NoPKCE bool
	// SSE serves the MCP server over the legacy HTTP+SSE transport (at
	// the same /mcp path) instead of streamable HTTP.
	SSE bool

	// ClientKey, with ClientID, authenticates the client by private key
	// JWT assertions (RFC 7523) signed with it; the client credentials
	// grant is then allowed (see grants.go).
	ClientKey crypto.PublicKey
	// AssertionKey, if set, allows the JWT bearer grant (RFC 7523) with
	// assertions signed by it whose aud is the server's URL: a workload's
	// token, or an IdP's ID-JAG (IdP.PublicKey).
	AssertionKey crypto.PublicKey
	// DPoP makes the server issue DPoP-bound tokens to token requests
	// that carry a proof, and demand "DPoP" and a proof for them at the
	// MCP endpoint; DPoPNonce, if set, is the nonce every proof must
	// carry at the token endpoint (the server asks with use_dpop_nonce);
	// the MCP endpoint asks for DPoPNonce+"-rs".
	DPoP      bool
	DPoPNonce string
	// ReuseDetection makes a refresh token presented again after it was
	// rotated revoke every token descending from the same sign-in (its
	// family), as authorization servers that rotate refresh tokens do
	// (OAuth 2.0 Security BCP, section 4.14.2).
	ReuseDetection bool

	// JWT makes access tokens JWTs (RFC 9068) signed by the server's key
	// (see tokens.go): iss the server, aud the token request's resource,
	// sub and client_id the client, cnf.jkt for a DPoP-bound token.
	JWT bool
	// Resource is the audience of tokens whose request names no resource,
	// and the resource the authorization endpoint accepts; empty means the
	// server's own MCP endpoint.
	Resource string

	// TokenExchange allows the token exchange (RFC 8693) of an access
	// token the server signed (SignToken) for a token for another
	// resource, for the same user (mcpadapter.TokenExchanger); RefuseExchange lists the
	// subjects whose tokens it refuses to exchange (invalid_grant).
	TokenExchange  bool
	RefuseExchange []string
	// UserSubject makes the sub of a JWT access token issued for a
	// user's sign-in (the authorization code grant, UserHeader) that
	// user, not the client: the server then identifies users, as a
	// gateway's own authorization server does.
	UserSubject bool
}

// Server is the authorization server and the protected MCP endpoint.
type Server struct {
	// URL is the server's origin; MCPURL its MCP endpoint.
	URL, MCPURL string

	opts Options
	srv  *httptest.Server

	mu      sync.Mutex
	clients map[string]client // client_id -> registration
	codes   map[string]grant  // authorization codes
	tokens  map[string]grant  // access tokens
	refresh map[string]grant  // refresh tokens
	counts  Counts
	authz   []string          // Authorization headers seen at the MCP endpoint
	forms   []url.Values      // token requests' forms, in order
	jtis    map[string]bool   // DPoP proof IDs seen
	spent   map[string]string // rotated refresh tokens -> their family
	signing []signingKey      // token signing keys, the current one last
	seen    []Request         // the requests at the MCP endpoint
	redir   string            // see RedirectMCP
	refused map[string]bool   // users whose tokens the MCP endpoint refuses (RefuseUser)
}

// UserHeader is the request header that names the user signed in to the
// authorization server in the browser that visits /authorize (a test
// plays the browser): the code, and the tokens it is exchanged for,
// belong to that user (Request.User).
const UserHeader = "X-Testauth-User"

// Request is a request the MCP endpoint received.
type Request struct {
	// Authorization is its Authorization header ("" for none).
	Authorization string
	// User is the user (UserHeader) whose sign-in issued its token, if
	// the token is valid.
	User string
	// Header is its header.
	Header http.Header
}

// Requests returns the requests the MCP endpoint received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// RedirectMCP makes the MCP endpoint answer every request with a valid
// token with a 307 redirect to target ("" stops it).
func (s *Server) RedirectMCP(target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redir = target
}

// Counts says what the server has seen.
type Counts struct {
	Registrations  int // dynamic client registrations
	Authorizations int // visits to the authorization endpoint
	CodeExchanges  int // authorization_code grants
	Refreshes      int // refresh_token grants
	Unauthorized   int // 401 answers at the MCP endpoint
	StepUps        int // 403 insufficient_scope answers
	MCPRequests    int // requests that reached the MCP server

	ClientCredentials int // client_credentials grants
	JWTBearer         int // JWT bearer grants
	DPoPTokens        int // DPoP-bound tokens issued
	NonceChallenges   int // use_dpop_nonce answers
	// RefreshReuses counts refresh tokens presented again after their
	// rotation (with ReuseDetection, each revoked its family).
	RefreshReuses int
	// WrongKeyRefreshes counts refreshes of a DPoP-bound public client's
	// refresh token with another key's proof (refused, RFC 9449 section 5).
	WrongKeyRefreshes int
	// JWKSRequests counts fetches of /jwks; Introspections requests to
	// /introspect.
	JWKSRequests   int
	Introspections int
	// TokenExchanges counts the token exchanges granted (mcpadapter.TokenExchanger).
	TokenExchanges int
}

type client struct {
	secret    string
	redirects []string
}

type grant struct {
	clientID  string
	scopes    []string
	redirect  string
	challenge string
	resource  string
	expires   time.Time
	jkt       string // the DPoP key thumbprint the token is bound to
	family    string // the sign-in the token descends from
	user      string // the browser's user at /authorize (UserHeader)
}

// Start starts a Server on 127.0.0.1, closed by t's cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("testauth: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// New starts a Server on 127.0.0.1; Close stops it.
func New(opts Options) (*Server, error) {
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Hour
	}
	s := &Server{
		opts:    opts,
		clients: make(map[string]client),
		codes:   make(map[string]grant),
		tokens:  make(map[string]grant),
		refresh: make(map[string]grant),
		jtis:    make(map[string]bool),
		spent:   make(map[string]string),
	}
	if opts.ClientID != "" {
		s.clients[opts.ClientID] = client{secret: opts.ClientSecret}
	}
	k, err := newSigningKey()
	if err != nil {
		return nil, err
	}
	s.signing = []signingKey{k}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("/register", s.register)
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	mux.HandleFunc("/jwks", s.jwks)
	mux.HandleFunc("/introspect", s.introspect)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return opts.MCP }, &mcp.StreamableHTTPOptions{Stateless: !opts.Stateful})
	if opts.SSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return opts.MCP }, nil)
	}
	mux.Handle("/mcp", s.protect(h))
	s.URL = "http://" + l.Addr().String()
	s.MCPURL = s.URL + "/mcp"
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.Listener = l
	s.srv.Start()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Counts returns what the server has seen so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// AuthorizationHeaders returns the Authorization headers the MCP endpoint
// received, in order ("" for none).
func (s *Server) AuthorizationHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authz)
}

// TokenRequests returns the forms of the token requests the server
// received, in order.
func (s *Server) TokenRequests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]url.Values, len(s.forms))
	for i, f := range s.forms {
		out[i] = url.Values(maps.Clone(f))
	}
	return out
}

// RevokeUser makes every token issued for user invalid (the tokens a
// token exchange issued for that subject, say).
func (s *Server) RevokeUser(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.tokens, func(_ string, g grant) bool { return g.user == user })
	maps.DeleteFunc(s.refresh, func(_ string, g grant) bool { return g.user == user })
}

// RefuseUser makes the MCP endpoint answer 401 to every token of user,
// valid or not, as a server that revoked them does (on == false ends it).
func (s *Server) RefuseUser(user string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = make(map[string]bool)
	}
	s.refused[user] = on
}

// Revoke makes every access and refresh token invalid.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
	clear(s.refresh)
}

// revokeFamily makes every token of the sign-in fam invalid.
func (s *Server) revokeFamily(fam string) {
	maps.DeleteFunc(s.tokens, func(_ string, g grant) bool { return g.family == fam })
	maps.DeleteFunc(s.refresh, func(_ string, g grant) bool { return g.family == fam })
}

// ExpireAccessTokens makes every access token invalid, leaving refresh
// tokens usable.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 s.MCPURL,
		"authorization_servers":    []string{s.URL},
		"scopes_supported":         []string{BaseScope, AdminScope},
		"bearer_methods_supported": []string{"header"},
	})
}

func (s *Server) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{
		"issuer":                                s.URL,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"scopes_supported":                      []string{BaseScope, AdminScope, "offline_access"},
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_post", "client_secret_basic"},
		"jwks_uri":                              s.URL + "/jwks",
		"introspection_endpoint":                s.URL + "/introspect",
	}
	if !s.opts.NoRegistration {
		m["registration_endpoint"] = s.URL + "/register"
	}
	if s.opts.NoPKCE {
		delete(m, "code_challenge_methods_supported")
	}
	if s.opts.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256", "ES384", "RS256"}
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&md) != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "client-" + rand.Text()[:8]
	s.mu.Lock()
	s.clients[id] = client{redirects: md.RedirectURIs}
	s.counts.Registrations++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  id,
		"redirect_uris":              md.RedirectURIs,
		"token_endpoint_auth_method": "none",
	})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.counts.Authorizations++
	c, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	switch {
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case len(c.redirects) > 0 && !slices.Contains(c.redirects, redirect):
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "want response_type=code with an S256 code challenge", http.StatusBadRequest)
		return
	case q.Get("resource") != s.resource():
		http.Error(w, "resource must be "+s.resource(), http.StatusBadRequest)
		return
	}
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	bq := back.Query()
	bq.Set("state", q.Get("state"))
	if s.opts.Deny {
		bq.Set("error", "access_denied")
		bq.Set("error_description", "the user said no")
	} else {
		code := rand.Text()
		s.mu.Lock()
		s.codes[code] = grant{
			clientID:  q.Get("client_id"),
			scopes:    strings.Fields(q.Get("scope")),
			redirect:  redirect,
			challenge: q.Get("code_challenge"),
			resource:  q.Get("resource"),
			expires:   time.Now().Add(time.Minute),
			user:      r.Header.Get(UserHeader),
		}
		s.mu.Unlock()
		bq.Set("code", code)
	}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	clientID, secret, ok := r.BasicAuth()
	if !ok {
		clientID, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forms = append(s.forms, url.Values(maps.Clone(r.PostForm)))
	c, known := s.clients[clientID]
	if r.PostForm.Has("client_assertion") {
		var err error
		clientID, err = s.checkClientAssertion(r.PostForm)
		known, c.secret, secret = err == nil, "", ""
	}
	if !known || c.secret != secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	jkt := ""
	if s.opts.DPoP && r.Header.Get("DPoP") != "" {
		var err error
		jkt, err = s.checkProof(r.Header.Get("DPoP"), http.MethodPost, s.URL+"/token", "", s.opts.DPoPNonce)
		if errors.Is(err, errNonce) {
			w.Header().Set("DPoP-Nonce", s.opts.DPoPNonce)
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "use_dpop_nonce"})
			return
		} else if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_dpop_proof"})
			return
		}
	}
	var g grant
	switch r.PostForm.Get("grant_type") {
	case "client_credentials":
		if s.opts.ClientKey == nil && c.secret == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unauthorized_client"})
			return
		}
		g = grant{clientID: clientID, scopes: strings.Fields(r.PostForm.Get("scope")), resource: r.PostForm.Get("resource")}
		s.counts.ClientCredentials++
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if s.opts.AssertionKey == nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		claims, err := verifyJWT(r.PostForm.Get("assertion"), s.opts.AssertionKey, s.URL)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		// The token is the assertion's subject's (an ID-JAG's user).
		sub, _ := claims["sub"].(string)
		g = grant{clientID: clientID, scopes: strings.Fields(r.PostForm.Get("scope")), resource: r.PostForm.Get("resource"), user: sub}
		s.counts.JWTBearer++
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		var ok bool
		if g, ok = s.exchange(w, r.PostForm, clientID); !ok {
			return
		}
	case "authorization_code":
		code := r.PostForm.Get("code")
		g, ok = s.codes[code]
		delete(s.codes, code)
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.clientID != clientID || time.Now().After(g.expires) ||
			g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		g.family = rand.Text()
		s.counts.CodeExchanges++
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		g, ok = s.refresh[rt]
		if !ok {
			if fam, spent := s.spent[rt]; spent {
				s.counts.RefreshReuses++
				if s.opts.ReuseDetection {
					s.revokeFamily(fam)
				}
			}
		}
		// A public client's DPoP-bound refresh token is bound to its key
		// (RFC 9449, section 5): another key's proof is refused.
		if ok && g.jkt != "" && c.secret == "" && !r.PostForm.Has("client_assertion") && jkt != g.jkt {
			s.counts.WrongKeyRefreshes++
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, rt) // refresh tokens rotate
		if !ok || g.clientID != clientID {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		s.spent[rt] = g.family
		s.counts.Refreshes++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	g.expires = time.Now().Add(s.opts.TokenTTL)
	g.jkt = jkt
	if s.opts.JWT {
		var err error
		if access, err = s.jwtFor(g); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
			return
		}
	}
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
		s.counts.DPoPTokens++
	}
	s.tokens[access] = g
	s.refresh[refresh] = g
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  access,
		"token_type":    typ,
		"expires_in":    int(s.opts.TokenTTL.Seconds()),
		"refresh_token": refresh,
		"scope":         strings.Join(g.scopes, " "),
	})
}

// protect checks the bearer token of every MCP request.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		tok, _ := strings.CutPrefix(authz, "Bearer ")
		if t, ok := strings.CutPrefix(authz, "DPoP "); ok {
			tok = t
		}
		meta := s.URL + "/.well-known/oauth-protected-resource/mcp"
		s.mu.Lock()
		s.authz = append(s.authz, authz)
		g, ok := s.tokens[tok]
		valid := ok && time.Now().Before(g.expires) && g.resource == s.MCPURL && slices.Contains(g.scopes, BaseScope) && !s.refused[g.user]
		if valid && g.jkt != "" {
			jkt, err := s.checkProof(r.Header.Get("DPoP"), r.Method, s.MCPURL, tok, s.resourceNonce())
			if errors.Is(err, errNonce) {
				s.mu.Unlock()
				w.Header().Set("DPoP-Nonce", s.resourceNonce())
				w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", resource_metadata="`+meta+`"`)
				http.Error(w, "use_dpop_nonce", http.StatusUnauthorized)
				return
			}
			valid = err == nil && jkt == g.jkt && strings.HasPrefix(authz, "DPoP ")
		}
		if !valid {
			s.counts.Unauthorized++
		}
		req := Request{Authorization: authz, Header: r.Header.Clone()}
		if valid {
			req.User = g.user
		}
		s.seen = append(s.seen, req)
		redir := s.redir
		s.mu.Unlock()
		if valid && redir != "" {
			http.Redirect(w, r, redir, http.StatusTemporaryRedirect)
			return
		}
		if !valid {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+meta+`", scope="`+BaseScope+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if (s.opts.AdminTool != "" || s.opts.ForbidMethod != "" || s.opts.ForbidTool != "") && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &msg)
			if s.opts.ForbidTool != "" && msg.Method == "tools/call" && msg.Params.Name == s.opts.ForbidTool {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			admin := s.opts.AdminTool != "" && msg.Method == "tools/call" && msg.Params.Name == s.opts.AdminTool && !slices.Contains(g.scopes, AdminScope)
			if admin || (msg.Method != "" && msg.Method == s.opts.ForbidMethod) {
				s.mu.Lock()
				s.counts.StepUps++
				s.mu.Unlock()
				// Only the scope missing: a client keeps the scopes it
				// was granted (step-up asks for both).
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+AdminScope+`", resource_metadata="`+meta+`"`)
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		s.mu.Lock()
		s.counts.MCPRequests++
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Authorize plays the browser of user (UserHeader) at the authorization
// URL authURL: it returns the URL the authorization server sends the
// browser back to (the client's redirect, with the code and the state),
// without following it.
func Authorize(authURL, user string) (*url.URL, error) {
	req, err := http.NewRequest(http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(UserHeader, user)
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusFound {
		return nil, errors.New("the authorization endpoint answered " + resp.Status + ": " + strings.TrimSpace(string(body)))
	}
	return url.Parse(resp.Header.Get("Location"))
}
