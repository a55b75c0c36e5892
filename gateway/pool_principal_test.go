package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPoolExchangedTokenPerPrincipal: a handshake-era server whose
// credential is exchanged per principal; bob's call from a client that
// can be asked holds the shared connection, so alice's calls and then
// those of bob's second session run on an extra connection (the same one,
// reused): each reaches the server with a token exchanged for its own
// principal, never another's.
func TestPoolExchangedTokenPerPrincipal(t *testing.T) {
	hold := make(chan struct{})
	held := make(chan struct{}, 1)
	e := startXchg(t, func(o *testauth.Options) {
		s := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
		s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.GetExtra().Header.Get("Authorization")}}}, nil
			})
		s.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				held <- struct{}{}
				select {
				case <-hold:
				case <-ctx.Done():
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil
			})
		o.MCP = s
	}, nil)
	t.Cleanup(func() { close(hold) }) // before the gateway closes
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asker := func(user string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: user, Version: "1"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: bearerTransport{e.token(t, user)}}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	bob, alice, bob2 := asker("bob"), asker("alice"), asker("bob")
	go func() { _, _ = bob.CallTool(ctx, &mcp.CallToolParams{Name: "up_hold", Arguments: map[string]any{}}) }()
	<-held
	for _, c := range []struct {
		who string
		cs  *mcp.ClientSession
	}{{"alice", alice}, {"alice", alice}, {"bob", bob2}, {"alice", alice}} {
		done := make(chan string, 1)
		go func() {
			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
			if err != nil {
				t.Errorf("%s's call: %v", c.who, err)
				done <- ""
				return
			}
			done <- res.Content[0].(*mcp.TextContent).Text
		}()
		select {
		case authz := <-done:
			if authz == "" {
				t.FailNow()
			}
			if u := e.userOf(t, authz); u != c.who {
				t.Errorf("%s's call reached the server as %q", c.who, u)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s's call waits while bob's holds the shared connection", c.who)
		}
	}
}
