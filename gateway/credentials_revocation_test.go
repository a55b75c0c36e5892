package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExchangeRevoked: a server that answers 401 to a principal's
// exchanged token (revoked before it expires) makes the gateway drop it
// and exchange the principal's token again, once: the call goes on with
// the new token, for clients of both eras. A server that refuses the new
// token too gets no third token: the call fails with a JSON-RPC error
// that quotes no token, and other principals go on.
func TestExchangeRevoked(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			e := startXchg(t, nil, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			alice := e.token(t, "alice")
			call := e.caller(t, ctx, v, alice)
			first, err := call()
			if err != nil {
				t.Fatal(err)
			}
			e.as.RevokeUser("alice")
			second, err := call()
			if err != nil {
				t.Fatalf("the call after the server revoked the exchanged token: %v", err)
			}
			if second == first || e.userOf(t, second) != "alice" {
				t.Errorf("tokens %q then %q: want a new one of alice's", first, second)
			}
			if c := e.as.Counts().TokenExchanges; c != 2 {
				t.Errorf("%d exchanges, want 2", c)
			}

			// Refused for good: one exchange more, no loop.
			e.as.RefuseUser("alice", true)
			before, seen := e.as.Counts().TokenExchanges, len(e.as.Requests())
			_, err = call()
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) {
				t.Fatalf("a call the server refuses: err = %v, want a JSON-RPC error", err)
			}
			if n := e.as.Counts().TokenExchanges - before; n != 1 {
				t.Errorf("%d exchanges for a call the server refuses, want 1", n)
			}
			if n := len(e.as.Requests()) - seen; n > 2 {
				t.Errorf("the server got %d requests for one call it refuses, want 2 at most", n)
			}
			for _, s := range []string{alice, second, xchgSecret} {
				if strings.Contains(rpc.Message, s) || strings.Contains(e.logs.String(), s) {
					t.Errorf("a token or the secret is in the error or the logs: %s", rpc.Message)
				}
			}
			bob, err := e.caller(t, ctx, v, e.token(t, "bob"))()
			if err != nil || e.userOf(t, bob) != "bob" {
				t.Fatalf("bob's call while alice is refused: %v", err)
			}
			e.as.RefuseUser("alice", false)
			if _, err := call(); err != nil {
				t.Fatalf("alice's call once the server takes her tokens again: %v", err)
			}
		})
	}
}

// caller returns what calls up_whoami as tok's principal with a client of
// protocol v (go-sdk's for 2025-11-25, mcpadapter's own for 2026-07-28),
// and returns the Authorization header the server got.
func (e *xchgEnv) caller(t *testing.T, ctx context.Context, v, tok string) func() (string, error) {
	if v == "2026-07-28" {
		c := e.ownClient(t, tok)
		return func() (string, error) {
			res, err := c.RelayCall(ctx, &mcp.CallToolParams{Name: "up_whoami"}, nil)
			if err != nil {
				return "", err
			}
			return resultText(res)
		}
	}
	cs := e.sdkClient(t, ctx, tok)
	return func() (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
		if err != nil {
			return "", err
		}
		return resultText(res)
	}
}

// resultText returns the text of a tool's result, or its error.
func resultText(res *mcp.CallToolResult) (string, error) {
	if len(res.Content) == 0 {
		return "", errors.New("an empty result")
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil {
		return "", errors.New("a result that is not text")
	}
	if res.IsError {
		return "", errors.New(text.Text)
	}
	return text.Text, nil
}
