package mcpadapter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestPrincipalCredentialsStayOnOrigin: with PrincipalToken and a
// CallIdentity's headers (the per-request layers of internal/httplayer),
// a server that redirects to another origin (another port on the same
// host) gets the request but neither the principal's token, nor the
// identity's headers, nor the configured ones; on the origin itself each
// principal's own arrive.
func TestPrincipalCredentialsStayOnOrigin(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, state := testserver.NewWithState(testserver.Options{})
	other := testserver.StartStreamable(t, srv, testserver.Stateless())
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	opts := func() *mcpadapter.ClientOptions {
		return &mcpadapter.ClientOptions{
			Auth: mcpadapter.PrincipalToken(func(_ context.Context, p string) (string, error) {
				return "sekrit-" + p, nil
			}),
			Headers: map[string]string{"X-Api-Key": "k3y"},
		}
	}
	identity := func(p string) context.Context {
		return mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p, Headers: map[string]string{"X-Tenant": "tenant-of-" + p}})
	}

	c, err := mcpadapter.NewClient(redirector.URL+"/mcp", opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.CallTool(identity(p), "headers", nil, nil); err != nil {
			t.Fatal(err)
		}
		h := state.LastHeaders("headers")
		if h == nil {
			t.Fatalf("%s: the other origin saw no call", p)
		}
		for _, k := range []string{"Authorization", "X-Api-Key", "X-Tenant"} {
			if v := h.Get(k); v != "" {
				t.Errorf("%s: the other origin got %s: %q", p, k, v)
			}
		}
	}

	// On the origin itself, each principal's own arrive.
	direct, err := mcpadapter.NewClient(other.URL, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	for _, p := range []string{"alice", "bob"} {
		if _, err := direct.CallTool(identity(p), "headers", nil, nil); err != nil {
			t.Fatal(err)
		}
		h := state.LastHeaders("headers")
		if h.Get("Authorization") != "Bearer sekrit-"+p || h.Get("X-Tenant") != "tenant-of-"+p || h.Get("X-Api-Key") != "k3y" {
			t.Errorf("%s: the origin got %v", p, h)
		}
	}
}
