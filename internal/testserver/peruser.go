package testserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PerUserOptions configures [ServePerUser].
type PerUserOptions struct {
	// Stateless serves the 2026-07-28 protocol (no sessions); otherwise
	// the server speaks the handshake era and ties each session to the
	// user who opened it (go-sdk refuses another user's requests on it).
	Stateless bool
	// CacheTTLMs and CacheScope, if set, are the caching hints of every
	// result (see Options).
	CacheTTLMs int
	CacheScope string
	// OmitCacheScope leaves cacheScope out of every answer (go-sdk writes
	// "public" for a scope not set), as some servers do.
	OmitCacheScope bool
}

// PerUserToken is the bearer token of user on a [ServePerUser] server.
func PerUserToken(user string) string { return "token-of-" + user }

// A PerUserServer answers each user differently: its users sign in with
// [PerUserToken] (go-sdk's auth.RequireBearerToken with TokenInfo.UserID
// set, so a handshake-era session belongs to one user), and each sees
// their own instructions ("instructions for USER"), their own tools —
// USER_private ("secret tool of USER"), query (whose db argument's enum
// is ["USER-payroll-db"]), whoami (answers the user's name, as the
// verified token says), slow (answers "USER" after a progress
// notification "progress of USER" and a log message "log of USER"),
// confirm (asks the user "confirm for USER?" and answers "USER
// confirmed" or "USER declined"). A log message is sent only once the
// session's log level is set. A handshake-era server also has sample
// (asks the client's model "sample for USER" with sampling/createMessage
// and answers "USER sampled: TEXT"); a stateless one declares the Tasks
// extension and has whoamitask (whoami, answered with a task the user's
// server alone knows, which completes at its first tasks/get).
type PerUserServer struct {
	// URL is the endpoint.
	URL string
	// HTTP records the requests.
	HTTP *HTTPServer

	mu       sync.Mutex
	sessions map[string]int // user → sessions opened
	servers  map[string]*mcp.Server
	opts     PerUserOptions
}

// Sessions returns how many sessions user opened (initialize handshakes;
// none on a stateless server).
func (s *PerUserServer) Sessions(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[user]
}

// ServePerUser starts a [PerUserServer] on loopback, closed by t's cleanup.
func ServePerUser(t testing.TB, opts PerUserOptions) *PerUserServer {
	t.Helper()
	pu := &PerUserServer{sessions: make(map[string]int), servers: make(map[string]*mcp.Server), opts: opts}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		ti := auth.TokenInfoFromContext(r.Context())
		if ti == nil {
			return nil
		}
		return pu.serverOf(ti.UserID)
	}, &mcp.StreamableHTTPOptions{Stateless: opts.Stateless})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		user, ok := strings.CutPrefix(token, "token-of-")
		if !ok || user == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
	}
	var handler http.Handler = h
	if opts.OmitCacheScope {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(omitScopeWriter{w}, r)
		})
	}
	srv := start(t, nil, auth.RequireBearerToken(verify, nil)(handler), "/mcp", func(r *http.Request) string { return r.Header.Get(SessionHeader) })
	pu.URL, pu.HTTP = srv.URL, srv
	return pu
}

// serverOf returns user's server, counting a session.
func (s *PerUserServer) serverOf(user string) *mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv := s.servers[user]; srv != nil {
		return srv
	}
	srv := newPerUserServer(user, s.opts, func() {
		s.mu.Lock()
		s.sessions[user]++
		s.mu.Unlock()
	})
	s.servers[user] = srv
	return srv
}

// userOf returns the user of a request, as its verified token says.
func userOf(req *mcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		return req.Extra.TokenInfo.UserID
	}
	return ""
}

func newPerUserServer(user string, opts PerUserOptions, initialized func()) *mcp.Server {
	sopts := &mcp.ServerOptions{Instructions: "instructions for " + user,
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { initialized() }}
	if !opts.Stateless {
		sopts.SupportedProtocolVersions = Legacy.supportedVersions()
	} else {
		// go-sdk's default capabilities (logging), and the Tasks extension.
		//lint:ignore SA1019 go-sdk declares logging by default; kept as it was
		caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
		caps.AddExtension(TasksExtension, map[string]any{})
		sopts.Capabilities = caps
	}
	setCacheOptions(Options{CacheTTLMs: opts.CacheTTLMs, CacheScope: opts.CacheScope}, sopts)
	srv := mcp.NewServer(&mcp.Implementation{Name: "per-user", Version: "1"}, sopts)
	say := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{text(s)}}
	}
	srv.AddTool(&mcp.Tool{Name: user + "_private", Description: "secret tool of " + user,
		InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return say(userOf(req) + " private"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "query", Description: "Query one of your databases.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"db": map[string]any{"type": "string", "enum": []any{user + "-payroll-db"}}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return say(userOf(req) + " queried"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "whoami", Description: "Say who called, as the verified token says.",
		InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return say(userOf(req)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "slow", Description: "Report progress and a log message, then say who called.",
		InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := userOf(req)
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "progress of " + who})
			}
			//lint:ignore SA1019 logging lives in the handshake era, which this server speaks
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "log of " + who})
			return say(who), nil
		})
	srv.AddTool(&mcp.Tool{Name: "confirm", Description: "Ask the user to confirm, then say what they answered.",
		InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := userOf(req)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "confirm for " + who + "?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
			if err != nil {
				return nil, err
			}
			if res.Action != "accept" {
				return say(fmt.Sprintf("%s %s", who, res.Action)), nil
			}
			return say(who + " confirmed"), nil
		})
	if opts.Stateless {
		addTasks(srv, user)
	} else {
		addSampling(srv)
	}
	return srv
}

// addSampling gives srv the sample tool: it asks the client for a
// completion of "sample for USER" (sampling/createMessage) and answers
// "USER sampled: TEXT" with the text of the client's answer.
func addSampling(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "sample", Description: "Ask the client's model, then say who called and what it answered.",
		InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := userOf(req)
			//lint:ignore SA1019 sampling lives in the handshake era, which this server speaks
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 16,
				//lint:ignore SA1019 sampling lives in the handshake era, which this server speaks
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: text("sample for " + who)}}})
			if err != nil {
				return nil, err
			}
			answer := ""
			if tc, ok := res.Content.(*mcp.TextContent); ok {
				answer = tc.Text
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text(who + " sampled: " + answer)}}, nil
		})
}

// omitScopeWriter removes the cacheScope member go-sdk writes in each
// answer (one event or JSON body per Write).
type omitScopeWriter struct{ http.ResponseWriter }

func (w omitScopeWriter) Write(p []byte) (int, error) {
	q := bytes.ReplaceAll(p, []byte(`,"cacheScope":"public"`), nil)
	q = bytes.ReplaceAll(q, []byte(`"cacheScope":"public",`), nil)
	if _, err := w.ResponseWriter.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w omitScopeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
