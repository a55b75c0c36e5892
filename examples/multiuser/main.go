// Command multiuser is the recipe of docs/multi-user.md as one program: a
// service that runs as two replicas and serves two users, over one MCP
// server that knows each user by a bearer token.
//
// Each replica has one Adapter for all users. Whom a request is for goes on
// its context (WithCallIdentity), and PrincipalToken picks that user's token
// for every HTTP request. When a tool asks the user something, the replica
// saves the pending call as JSON next to the user's conversation; the other
// replica loads it and resumes it for the same user.
//
//	go run ./multiuser
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "multiuser:", err)
		os.Exit(1)
	}
}

// serviceToken is the service's own token for the requests made with no
// user's identity (each user's connection is made with the user's token);
// userTokens are each user's. A
// real service reads them from its secret store or its identity provider.
const serviceToken = "token-of-the-service"

var userTokens = map[string]string{"alice": "token-of-alice", "bob": "token-of-bob"}

func run(ctx context.Context, w io.Writer) error {
	server := startNotesServer()
	defer server.Close()

	// What every replica shares: a cache store (here in memory; in a
	// deployment redisstore.NewCacheStore or pgstore.NewCacheStore) and the
	// application's database, where a conversation keeps its pending call.
	cache := mcpadapter.NewMemoryCacheStore(0)
	db := &database{rows: map[string]savedCall{}}

	replica1, err := newReplica(server.URL, cache)
	if err != nil {
		return err
	}
	defer replica1.Close()
	replica2, err := newReplica(server.URL, cache)
	if err != nil {
		return err
	}
	defer replica2.Close()

	// 1. Both users at once, on both replicas: each gets their own notes.
	var wg sync.WaitGroup
	lines := make([]string, 4)
	for i, req := range []struct {
		user    string
		replica *mcpadapter.Adapter
	}{{"alice", replica1}, {"bob", replica1}, {"alice", replica2}, {"bob", replica2}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := callFor(ctx, req.replica, req.user, "my_notes", `{}`)
			if err != nil {
				text = "error: " + err.Error()
			}
			lines[i] = fmt.Sprintf("replica %d, %s: %s", 1+i/2, req.user, text)
		}()
	}
	wg.Wait()
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}

	// 2. A question for the user: alice's call on replica 1 asks what the
	// note should say. Replica 1 saves the pending call with her
	// conversation and answers her request; her answer comes to replica 2.
	_, err = callFor(ctx, replica1, "alice", "add_note", `{}`)
	var ask *mcpadapter.InputRequiredError
	if !errors.As(err, &ask) {
		return fmt.Errorf("add_note should have asked a question, got %v", err)
	}
	fmt.Fprintf(w, "replica 1, alice is asked: %s\n", ask.Pending.Requests[0].Message)
	if err := db.save("conversation-1", "alice", ask.Pending); err != nil {
		return err
	}

	// Bob cannot resume alice's call: the pending call is bound to the
	// principal it was made for, and the adapter refuses anyone else.
	if _, err := resumeFor(ctx, replica2, db, "conversation-1", "bob", "Bob was here"); err != nil {
		fmt.Fprintf(w, "replica 2, bob resumes alice's call: %v\n", err)
	}
	text, err := resumeFor(ctx, replica2, db, "conversation-1", "alice", "Buy bread")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replica 2, alice answers: %s\n", text)
	text, err = callFor(ctx, replica1, "alice", "my_notes", `{}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replica 1, alice: %s\n", text)
	return nil
}

// newReplica is what each replica of the service builds once at start: one
// Adapter for every user.
func newReplica(url string, cache mcpadapter.CacheStore) (*mcpadapter.Adapter, error) {
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
		Name: "notes",
		Auth: mcpadapter.PrincipalToken(func(_ context.Context, principal string) (string, error) {
			if principal == "" {
				return serviceToken, nil
			}
			token, ok := userTokens[principal]
			if !ok {
				return "", fmt.Errorf("no token for %q", principal)
			}
			return token, nil
		}),
		Cache: &mcpadapter.CacheConfig{Store: cache},
	})
	if err != nil {
		return nil, err
	}
	return mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
}

// callFor calls a tool for a user: the user's identity goes on the context.
func callFor(ctx context.Context, a *mcpadapter.Adapter, user, tool, args string) (string, error) {
	ctx = mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: user})
	t, err := findTool(ctx, a, tool)
	if err != nil {
		return "", err
	}
	res, err := t.Call(ctx, json.RawMessage(args))
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// resumeFor answers the pending call of a conversation, for a user.
func resumeFor(ctx context.Context, a *mcpadapter.Adapter, db *database, conversation, user, note string) (string, error) {
	pending, err := db.load(conversation)
	if err != nil {
		return "", err
	}
	ctx = mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: user})
	t, err := findTool(ctx, a, pending.ModelTool)
	if err != nil {
		return "", err
	}
	res, err := t.Resume(ctx, pending, &elicitation.Resume{Responses: map[string]elicitation.Response{
		"note": {Action: elicitation.Accept, Content: map[string]any{"text": note}},
	}})
	if err != nil {
		return "", err
	}
	db.done(conversation)
	return res.Text(), nil
}

func findTool(ctx context.Context, a *mcpadapter.Adapter, name string) (*mcpadapter.Tool, error) {
	tools, err := a.Tools(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no tool %q", name)
}

// database stands for the application's own: a conversation's pending call,
// saved with the user it belongs to.
type database struct {
	mu   sync.Mutex
	rows map[string]savedCall
}

type savedCall struct {
	User    string          // whose conversation: the adapter checks it too (PendingCall.Principal)
	Pending json.RawMessage // a *mcpadapter.PendingCall: plain data
}

func (d *database) save(conversation, user string, p *mcpadapter.PendingCall) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rows[conversation] = savedCall{User: user, Pending: b}
	return nil
}

func (d *database) load(conversation string) (*mcpadapter.PendingCall, error) {
	d.mu.Lock()
	row, ok := d.rows[conversation]
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("conversation %s has no pending call", conversation)
	}
	var p mcpadapter.PendingCall
	if err := json.Unmarshal(row.Pending, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func (d *database) done(conversation string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.rows, conversation)
}

// startNotesServer serves a stateless 2026-07-28 MCP server on loopback
// that knows its users by their bearer tokens: my_notes lists the caller's
// notes, add_note asks what to write and adds it.
func startNotesServer() *httptest.Server {
	users := map[string]string{serviceToken: "service"}
	for user, token := range userTokens {
		users[token] = user
	}
	var mu sync.Mutex
	notes := map[string][]string{"alice": {"call the bank"}, "bob": {"water the plants"}}

	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	caller := func(req *mcp.CallToolRequest) string { return req.Extra.TokenInfo.UserID }
	mcp.AddTool(srv, &mcp.Tool{Name: "my_notes", Description: "The caller's notes."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			text := caller(req) + "'s notes: " + strings.Join(notes[caller(req)], "; ")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_note", Description: "Add a note; asks the user what it says."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			r, ok := req.Params.InputResponses["note"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"note": &mcp.ElicitParams{
					Mode:    "form",
					Message: "What should the note say?",
					RequestedSchema: map[string]any{"type": "object", "required": []any{"text"},
						"properties": map[string]any{"text": map[string]any{"type": "string"}}},
				}}}, nil, nil
			}
			if r.Action != "accept" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "nothing was added"}}}, nil, nil
			}
			mu.Lock()
			defer mu.Unlock()
			notes[caller(req)] = append(notes[caller(req)], fmt.Sprint(r.Content["text"]))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "note added for " + caller(req)}}}, nil, nil
		})

	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		user, ok := users[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	return httptest.NewServer(auth.RequireBearerToken(verify, nil)(h))
}
