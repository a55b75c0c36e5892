package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const aliceAPIKey = "alice-api-key-3c9d0b7e"

// TestExchangePromptsPerPrincipal: a prompts/get of a principal reaches a
// server whose credential is per principal with that principal's
// exchanged token, never the gateway's own (client credentials) token it
// lists with, for alice and bob at once on clients of both eras.
func TestExchangePromptsPerPrincipal(t *testing.T) {
	e := startXchg(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	own := e.ownClient(t, e.token(t, "alice"))
	sdk := e.sdkClient(t, ctx, e.token(t, "bob"))
	ocs, err := own.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, cs := range []*mcp.ClientSession{ocs, sdk} {
		want := []string{"alice", "bob"}[i]
		for range 2 {
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up_whoami"})
			if err != nil {
				t.Fatalf("%s's prompts/get: %v", want, err)
			}
			authz := res.Messages[0].Content.(*mcp.TextContent).Text
			if u := e.userOf(t, authz); u != want {
				t.Errorf("%s's prompts/get reached the server as %q", want, u)
			}
		}
	}
}

// TestExchangeNotForAPIKeys: a principal authenticated by an API key of
// the gateway (here named as a user whose exchanged token the gateway
// holds) is refused at a server whose credential is per principal, with
// CodeUpstreamAuth: its key goes to no authorization server, and its
// request goes to the server with no one's token.
func TestExchangeNotForAPIKeys(t *testing.T) {
	e := startXchgGuard(t, nil, nil, func(o *resourceserver.Options) {
		o.APIKeys = []resourceserver.APIKey{{Principal: "alice", Key: aliceAPIKey}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := e.sdkClient(t, ctx, e.token(t, "alice")).CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	seen, exchanges := len(e.as.Requests()), e.as.Counts().TokenExchanges
	keyed := e.sdkClient(t, ctx, aliceAPIKey)
	_, err := keyed.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != gateway.CodeUpstreamAuth {
		t.Fatalf("an API key's call: %v, want a JSON-RPC error %d", err, gateway.CodeUpstreamAuth)
	}
	if _, err := keyed.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up_whoami"}); !errors.As(err, &rpc) || rpc.Code != gateway.CodeUpstreamAuth {
		t.Fatalf("an API key's prompts/get: %v, want a JSON-RPC error %d", err, gateway.CodeUpstreamAuth)
	}
	if n := len(e.as.Requests()) - seen; n != 0 {
		t.Errorf("the server got %d requests of the API key's principal", n)
	}
	if n := e.as.Counts().TokenExchanges - exchanges; n != 0 {
		t.Errorf("%d exchanges for an API key", n)
	}
	for _, f := range e.as.TokenRequests() {
		if strings.Contains(f.Encode(), aliceAPIKey) {
			t.Errorf("the API key reached the authorization server")
		}
	}
	if strings.Contains(e.logs.String(), aliceAPIKey) || strings.Contains(e.plainHdr.String(), aliceAPIKey) {
		t.Errorf("the API key is in the logs or reached a server")
	}
}
