//lint:file-ignore SA1019 the tests relay a handshake-era server's roots and sampling requests, deprecated in 2026-07-28 but alive in the handshake era

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asked records who among the gateway's clients was asked what.
type asked struct {
	mu  sync.Mutex
	got []string
}

func (a *asked) add(s string) {
	a.mu.Lock()
	a.got = append(a.got, s)
	a.mu.Unlock()
}

func (a *asked) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// principalClient connects user, with the gateway's token tok, to the
// gateway at url as a handshake-era go-sdk client that has roots
// (file:///home/USER) and a model (it answers "USER's model"), recording
// every question and log message it gets in a.
func principalClient(t *testing.T, ctx context.Context, url, tok, user string, a *asked) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: user, Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			q := ""
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					q = tc.Text
				}
			}
			a.add(fmt.Sprintf("%s sampled for %q", user, q))
			return &mcp.CreateMessageResult{Role: "assistant", Model: user, Content: &mcp.TextContent{Text: user + "'s model"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			a.add(fmt.Sprintf("%s got the log message %v", user, req.Params.Data))
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///home/" + user, Name: user})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{tok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return cs
}

// lateAsker is a handshake-era server whose "later" tool answers at once
// and, 400 ms after, asks the session it was called on for its roots and
// a completion of "for WHO" (WHO: the token's user), recording what it
// gets; "ask" asks the same mid-call and answers what it got; "log" sends
// the log message "for WHO"; "hold" holds its call until release is
// closed.
type lateAsker struct {
	srv     *mcp.Server
	held    chan struct{}
	release chan struct{}
	mu      sync.Mutex
	got     []string
	asked   sync.WaitGroup
}

func newLateAsker(userOf func(authz string) string) *lateAsker {
	l := &lateAsker{held: make(chan struct{}, 8), release: make(chan struct{})}
	l.srv = mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	l.srv.AddTool(&mcp.Tool{Name: "later", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := userOf(req.GetExtra().Header.Get("Authorization"))
			ss := req.Session
			l.asked.Go(func() {
				time.Sleep(400 * time.Millisecond)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if r, err := ss.ListRoots(ctx, nil); err == nil {
					var uris []string
					for _, root := range r.Roots {
						uris = append(uris, root.URI)
					}
					l.record(fmt.Sprintf("%s's session got roots %v", who, uris))
				} else {
					l.record(fmt.Sprintf("%s's session: roots/list failed: %v", who, err))
				}
				if r, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
					Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "for " + who}}}}); err == nil {
					l.record(fmt.Sprintf("%s's session got a completion from %s", who, r.Model))
				} else {
					l.record(fmt.Sprintf("%s's session: sampling failed: %v", who, err))
				}
			})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "later"}}}, nil
		})
	l.srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := userOf(req.GetExtra().Header.Get("Authorization"))
			r, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			m, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "for " + who}}}})
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: roots %v, model %s", who, uris, m.Model)}}}, nil
		})
	l.srv.AddTool(&mcp.Tool{Name: "log", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := userOf(req.GetExtra().Header.Get("Authorization"))
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "for " + who}); err != nil {
				return nil, err
			}
			// go-sdk hands the gateway a log message apart from the
			// answer: the answer does not overtake it.
			time.Sleep(100 * time.Millisecond)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
		})
	l.srv.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			l.held <- struct{}{}
			select {
			case <-l.release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil
		})
	return l
}

func (l *lateAsker) record(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

func (l *lateAsker) answers() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// questionsEnv is a gateway in front of a lateAsker ("up") whose
// credential is per principal: its endpoint, and a client of user's (with
// roots and a model, recording its questions in a), ready to call.
type questionsEnv struct {
	url    string
	client func(t *testing.T, ctx context.Context, user string, a *asked) *mcp.ClientSession
}

// TestPoolQuestionsStayOnTheirPrincipalsConnection: a handshake-era
// server whose credential is per principal (a token exchange, a sign-in
// per user: each principal has a connection of its own) asks for roots
// and a completion on alice's connection after her call has ended, while
// bob's call (a client that can be asked) is in flight on his. Bob is
// never asked a question that came on alice's connection, and none of his
// roots or his model's answers reaches alice's session at the server;
// questions during a call (on an extra connection beside bob's call, and
// alone on the shared one) reach their caller.
func TestPoolQuestionsStayOnTheirPrincipalsConnection(t *testing.T) {
	for _, setup := range perPrincipalSetups() {
		t.Run(setup.name, func(t *testing.T) {
			var l *lateAsker
			env := setup.start(t, &l)
			t.Cleanup(func() { close(l.release); l.asked.Wait() })
			questionsStayOnConnection(t, env, l)
		})
	}
}

// perPrincipalSetup starts a gateway in front of a lateAsker whose
// credential is per principal.
type perPrincipalSetup struct {
	name  string
	start func(t *testing.T, l **lateAsker) questionsEnv
}

// perPrincipalSetups are the credentials per principal: a token exchange,
// a sign-in per user (each user signs in before the client is returned).
func perPrincipalSetups() []perPrincipalSetup {
	return []perPrincipalSetup{
		{"exchange", func(t *testing.T, l **lateAsker) questionsEnv {
			var e *xchgEnv
			e = startXchg(t, func(o *testauth.Options) {
				*l = newLateAsker(func(authz string) string { return userAt(e.as, authz) })
				o.MCP, o.Stateful = (*l).srv, true
			}, nil)
			return questionsEnv{url: e.url, client: func(t *testing.T, ctx context.Context, user string, a *asked) *mcp.ClientSession {
				return principalClient(t, ctx, e.url, e.token(t, user), user, a)
			}}
		}},
		{"signin", func(t *testing.T, l **lateAsker) questionsEnv {
			ln, base := listen(t)
			e := &signInEnv{url: base + "/mcp", base: base, logs: &lockedBuffer{}}
			e.gwAS = startGatewayAS(t, e.url)
			*l = newLateAsker(func(authz string) string { return userAt(e.upAS, authz) })
			e.upAS = testauth.Start(t, testauth.Options{MCP: (*l).srv, Stateful: true, ClientID: upClient, ClientSecret: upSecret, NoRegistration: true})
			servers := []gateway.Server{{Name: "up", Config: &mcpadapter.ServerConfig{Name: "up", URL: e.upAS.MCPURL, Transport: "http",
				Auth: &mcpadapter.ServerAuth{Grant: &mcpadapter.GrantSettings{Type: "signin", Issuer: e.upAS.URL, ClientID: upClient,
					ClientSecret: upSecret, Scopes: []string{testauth.BaseScope}}}}}}
			e.gw = signInGateway(t, ln, base, e.gwAS, servers, []byte("0123456789abcdef0123456789abcdef"), nil, e.logs)
			return questionsEnv{url: e.url, client: func(t *testing.T, ctx context.Context, user string, a *asked) *mcp.ClientSession {
				cs := principalClient(t, ctx, e.url, e.token(t, user), user, a)
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_ask", Arguments: map[string]any{}})
				var we *jsonrpc.Error
				var d struct{ URL string }
				if !errors.As(err, &we) || we.Code != gateway.CodeSignInRequired || json.Unmarshal(we.Data, &d) != nil {
					t.Fatalf("%s's first call: want a sign-in required error, got %v", user, err)
				}
				newBrowser(t, user).signIn(t, d.URL)
				return cs
			}}
		}},
	}
}

// questionsStayOnConnection runs TestPoolQuestionsStayOnTheirPrincipalsConnection
// in env, in front of l.
func questionsStayOnConnection(t *testing.T, env questionsEnv, l *lateAsker) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var a asked
	alice := env.client(t, ctx, "alice", &a)
	bob := env.client(t, ctx, "bob", &a)
	if _, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "up_later", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("alice's call: %v", err)
	}
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "up_hold", Arguments: map[string]any{}})
		bobDone <- err
	}()
	<-l.held
	time.Sleep(time.Second) // the server asks on alice's connection meanwhile
	// A question during alice's call, on an extra connection (bob's call
	// holds the shared one), is hers.
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "up_ask", Arguments: map[string]any{}})
	if want := "alice: roots [file:///home/alice], model alice"; err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != want {
		t.Errorf("alice's call asking beside bob's: %v %+v, want %q", err, res, want)
	}
	l.release <- struct{}{}
	if err := <-bobDone; err != nil {
		t.Fatalf("bob's call: %v", err)
	}
	for _, s := range a.list() {
		if strings.HasPrefix(s, "bob ") {
			t.Errorf("a question on alice's connection was put to bob: %s", s)
		}
	}
	for _, s := range l.answers() {
		if strings.Contains(s, "bob") {
			t.Errorf("bob's answer reached alice's session at the server: %s", s)
		}
	}
	// And on the shared connection, alone.
	res, err = bob.CallTool(ctx, &mcp.CallToolParams{Name: "up_ask", Arguments: map[string]any{}})
	if want := "bob: roots [file:///home/bob], model bob"; err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != want {
		t.Errorf("bob's call asking alone: %v %+v, want %q", err, res, want)
	}
	t.Logf("asked: %v; the server got: %v", a.list(), l.answers())
}

// TestPoolLogsOfPrincipalsConnection: a handshake-era server whose
// credential is per principal sends a log message during alice's calls:
// alone on the shared client (her own connection there), and on an extra
// connection while bob's call holds the shared one. Alice gets each (she
// asked for every level), bob none.
func TestPoolLogsOfPrincipalsConnection(t *testing.T) {
	for _, setup := range perPrincipalSetups() {
		t.Run(setup.name, func(t *testing.T) {
			var l *lateAsker
			env := setup.start(t, &l)
			t.Cleanup(func() { close(l.release); l.asked.Wait() })
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var a asked
			alice := env.client(t, ctx, "alice", &a)
			bob := env.client(t, ctx, "bob", &a)
			logged := func(when string) {
				t.Helper()
				if _, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "up_log", Arguments: map[string]any{}}); err != nil {
					t.Fatalf("alice's call %s: %v", when, err)
				}
			}
			logged("alone")
			bobDone := make(chan error, 1)
			go func() {
				_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "up_hold", Arguments: map[string]any{}})
				bobDone <- err
			}()
			<-l.held
			logged("beside bob's")
			l.release <- struct{}{}
			if err := <-bobDone; err != nil {
				t.Fatalf("bob's call: %v", err)
			}
			time.Sleep(200 * time.Millisecond) // log messages come apart from the answers
			n := 0
			for _, s := range a.list() {
				switch {
				case s == "alice got the log message for alice":
					n++
				case strings.HasPrefix(s, "bob got the log"):
					t.Errorf("%s", s)
				}
			}
			if n != 2 {
				t.Errorf("alice got %d of her 2 calls' log messages: %v", n, a.list())
			}
		})
	}
}

// TestPoolRefusedPrincipalKeepsPoolForOthers: a handshake-era server
// whose credential is exchanged per principal refuses every token of
// eve's (401). With bob's call holding the shared connection, eve's call
// (a client that can be asked) fails to open an extra connection three
// times; alice's call, made right after, still gets an extra connection at
// once, not after the pause those refusals made (4 s) nor after bob's
// call: one principal refused by the server is her own failure, not the
// server's, and holds the pool back for no one.
func TestPoolRefusedPrincipalKeepsPoolForOthers(t *testing.T) {
	var l *lateAsker
	var e *xchgEnv
	e = startXchg(t, func(o *testauth.Options) {
		l = newLateAsker(func(authz string) string { return userAt(e.as, authz) })
		o.MCP, o.Stateful = l.srv, true
	}, nil)
	t.Cleanup(func() { close(l.release); l.asked.Wait() })
	e.as.RefuseUser("eve", true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var a asked
	alice := principalClient(t, ctx, e.url, e.token(t, "alice"), "alice", &a)
	bob := principalClient(t, ctx, e.url, e.token(t, "bob"), "bob", &a)
	eve := principalClient(t, ctx, e.url, e.token(t, "eve"), "eve", &a)
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "up_hold", Arguments: map[string]any{}})
		bobDone <- err
	}()
	<-l.held
	// Past each refusal eve's call waits for a connection, and tries to
	// open one again when the pause ends (1 s, then 2 s, ...): she gives
	// up after three refusals.
	cctx, ccancel := context.WithTimeout(ctx, 3500*time.Millisecond)
	res, err := eve.CallTool(cctx, &mcp.CallToolParams{Name: "up_log", Arguments: map[string]any{}})
	ccancel()
	if err == nil && !res.IsError {
		t.Fatal("eve's call, whose tokens the server refuses, succeeded")
	}
	t.Logf("eve's call: %v", err)
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "up_log", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("alice's call: %v", err)
		}
		t.Logf("alice's call beside bob's, after eve's were refused: %v", time.Since(start))
	case <-time.After(1500 * time.Millisecond):
		t.Errorf("alice's call waits (for bob's, or the pause eve's refusals made) after eve's calls were refused")
		<-done
	}
	l.release <- struct{}{}
	if err := <-bobDone; err != nil {
		t.Fatalf("bob's call: %v", err)
	}
}
