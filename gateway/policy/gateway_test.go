package policy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/policy"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestPolicyThroughGateway: a gateway behind a resource server with API
// keys for alice and bob, and a policy document: each principal lists only
// the tools the policy gives them, in both protocol eras, and a call of a
// tool it does not see is refused by name; a key with the admin scope sees
// everything.
func TestPolicyThroughGateway(t *testing.T) {
	p, err := policy.Parse([]byte(`{"rules":[
		{"principals":["alice"], "allow":["tool:files/*"]},
		{"principals":["bob"], "allow":["*/*"], "deny":["tool:files/add"]},
		{"scopes":["admin"], "allow":["*/*"]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	gw, err := gateway.New([]gateway.Server{
		{Name: "files", Target: testserver.New(testserver.Options{Name: "files"})},
		{Name: "github", Target: testserver.New(testserver.Options{Name: "github"})},
	}, &gateway.Options{Policy: p, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	url := "http://" + hs.Listener.Addr().String() + "/mcp"
	guard, err := resourceserver.New(&resourceserver.Options{Resource: url, Logger: quiet, APIKeys: []resourceserver.APIKey{
		{Principal: "alice", Key: "key-of-alice-0123456789"},
		{Principal: "bob", Key: "key-of-bob-0123456789"},
		{Principal: "root", Key: "key-of-root-0123456789", Scopes: []string{"admin"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = guard.Handler(gw)
	hs.Start()
	t.Cleanup(hs.Close)

	for _, v := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			tools := func(key string) (*mcp.ClientSession, []string) {
				c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(key)}}, &mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				return cs, names
			}
			alice, aliceTools := tools("key-of-alice-0123456789")
			_, bobTools := tools("key-of-bob-0123456789")
			_, rootTools := tools("key-of-root-0123456789")
			if len(aliceTools) == 0 || slices.ContainsFunc(aliceTools, func(n string) bool { return !strings.HasPrefix(n, "files_") }) {
				t.Errorf("alice sees %v, want only files_ tools", aliceTools)
			}
			if slices.Contains(bobTools, "files_add") || !slices.Contains(bobTools, "github_add") || !slices.Contains(bobTools, "files_echo") {
				t.Errorf("bob sees %v", bobTools)
			}
			if !slices.Contains(rootTools, "files_add") || len(rootTools) <= len(bobTools) {
				t.Errorf("root sees %v", rootTools)
			}
			res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "github_echo", Arguments: map[string]any{"text": "x"}})
			if err == nil {
				t.Fatalf("alice called a tool the policy does not give her: %+v", res)
			}
			// The refusal names the tools alice may call, and no other.
			msg := err.Error()
			if !strings.Contains(msg, "unknown tool") || !strings.Contains(msg, aliceTools[0]) || strings.Contains(msg, "github_add") || strings.Contains(msg, "known tools: github") {
				t.Errorf("the refusal: %v", err)
			}
		})
	}
}
