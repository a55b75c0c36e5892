package resourceserver_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scopePolicy lets only principals with AdminScope use the add tool, and
// records the principals it was asked about.
type scopePolicy struct{}

func (scopePolicy) Allow(ctx context.Context, principal, server, kind, name string) bool {
	ti := gateway.TokenInfoFrom(ctx)
	if ti == nil || ti.UserID != principal {
		return false
	}
	return name != "add" || slices.Contains(ti.Scopes, testauth.AdminScope)
}

// withHeader sets Authorization on every request.
type withHeader struct {
	auth string
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", h.auth)
	return http.DefaultTransport.RoundTrip(r)
}

// TestPrincipalsAndPolicy: the sub of an accepted token is the gateway's
// principal and its scopes reach the Policy (gateway.TokenInfoFrom):
// alice (mcp:tools) does not see the add tool, bob (mcp:admin too) does
// and may call it, in both protocol eras; alice cannot use bob's session.
func TestPrincipalsAndPolicy(t *testing.T) {
	e := setupWith(t, nil, nil, &gateway.Options{Policy: scopePolicy{}})
	alice := e.token(t, map[string]any{"sub": "alice"})
	bob := e.token(t, map[string]any{"sub": "bob", "scope": testauth.BaseScope + " " + testauth.AdminScope})
	url := e.url
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			ctx := ctxFor(t, 30*time.Second)
			connect := func(tok string) *mcp.ClientSession {
				c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withHeader{"Bearer " + tok}}}, &mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				return cs
			}
			names := func(cs *mcp.ClientSession) []string {
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, tl := range res.Tools {
					out = append(out, tl.Name)
				}
				return out
			}
			a, b := connect(alice), connect(bob)
			if n := names(a); slices.Contains(n, "add") || !slices.Contains(n, "echo") {
				t.Errorf("alice sees %v", n)
			}
			if n := names(b); !slices.Contains(n, "add") {
				t.Errorf("bob sees %v", n)
			}
			if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil {
				t.Errorf("bob's add: %v", err)
			}
			res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
			if err == nil && !res.IsError {
				t.Errorf("alice called add")
			}
			if id := b.ID(); id != "" {
				// Alice's token with bob's session.
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
				req.Header.Set("Authorization", "Bearer "+alice)
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", v)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Errorf("alice used bob's session: %d", resp.StatusCode)
				}
			}
		})
	}
}

// TestSeveralIssuers: with two trusted issuers, the same sub from each is
// two principals (issuer#sub), and a token without sub is its client's.
func TestSeveralIssuers(t *testing.T) {
	e := setup(t, nil, nil)
	other := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), JWT: true, Resource: e.url})
	g, err := resourceserver.New(&resourceserver.Options{Resource: e.url, Issuers: []string{e.as.URL, other.URL}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	principal := func(tok string) string {
		r, _ := http.NewRequest(http.MethodPost, e.url, nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		ti, err := g.Check(r)
		if err != nil {
			t.Fatal(err)
		}
		return ti.UserID
	}
	a := principal(e.token(t, nil))
	otherTok, _ := other.SignToken(map[string]any{"sub": "alice", "aud": e.url})
	b := principal(otherTok)
	if a != e.as.URL+"#alice" || b != other.URL+"#alice" {
		t.Errorf("principals %q and %q", a, b)
	}
	// A client's own token is never taken for a user whose sub is the
	// client's id.
	if p := principal(e.token(t, map[string]any{"sub": nil, "client_id": "alice"})); p != e.as.URL+"#client:alice" || p == a {
		t.Errorf("a token without sub: %q", p)
	}
}
