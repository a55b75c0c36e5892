package mcpadapter_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestDiscoverAuthorizationRefused: a server that answers server/discover
// with 403 insufficient_scope (or 401) speaks the 2026-07-28 protocol and
// refuses the client's authorization. The client must say so, and not
// fall back to the initialize handshake and legacy SSE, whose answers
// ("Not Found") would hide it.
func TestDiscoverAuthorizationRefused(t *testing.T) {
	cases := []struct {
		name string
		auth func(user *browser) mcpadapter.Auth
		want []string
	}{
		{"403 insufficient_scope after sign-in", func(user *browser) mcpadapter.Auth {
			return &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewMemoryTokenStore()}
		}, []string{"server/discover", "refused authorization", "HTTP 403 Forbidden", `error "insufficient_scope"`, `scope "mcp:admin"`}},
		{"401 to a token it does not know", func(*browser) mcpadapter.Auth {
			return mcpadapter.BearerToken("not-a-token")
		}, []string{"server/discover", "refused authorization", "HTTP 401 Unauthorized", `scope "mcp:tools"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ForbidMethod: "server/discover"})
			user := &browser{}
			c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{
				Auth: tc.auth(user), ConnectTimeout: 10 * time.Second, Logger: quietLogger(),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Connect(ctx)
			var te *mcpadapter.TransportError
			if !errors.As(err, &te) || te.Op != "server/discover" {
				t.Fatalf("err = %v, want a TransportError of server/discover", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "Not Found") || strings.Contains(err.Error(), "resource_metadata") {
				t.Errorf("error %q", err)
			}
			// Neither an initialize nor a legacy SSE stream reached the
			// server, and the user signed in at most once.
			if n := as.Counts().MCPRequests; n != 0 {
				t.Errorf("%d requests got past the authorization check: the client fell back", n)
			}
			if user.count() > 1 {
				t.Errorf("the user was sent to sign in %d times", user.count())
			}
		})
	}
}

// TestDiscoverRefusalLeavesHandshakeAlone: a client pinned to the
// handshake era never asks server/discover, and connects.
func TestDiscoverRefusalLeavesHandshakeAlone(t *testing.T) {
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ForbidMethod: "server/discover"})
	user := &browser{}
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{
		Auth:            &mcpadapter.OAuth{OpenURL: user.open, Store: mcpadapter.NewMemoryTokenStore()},
		ProtocolVersion: testserver.LegacyVersion, ConnectTimeout: 10 * time.Second, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != mcpadapter.EraHandshake {
		t.Errorf("era %v", info.Era)
	}
}
