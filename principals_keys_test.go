package mcpadapter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPrincipalNamedLikeAnotherKey: mallory picks a principal name that
// spells alice's principal followed by alice's tenant header. Each is
// answered as themselves, and Connect shows each their own instructions:
// no principal name reaches another principal's connection.
func TestPrincipalNamedLikeAnotherKey(t *testing.T) {
	perUserEras(t, func(t *testing.T, stateless bool) {
		const mallory = `"alice" "X-Tenant"="a"`
		// mallory signs in as the server's user "mallory".
		c, _ := perUserClient(t, stateless, &mcpadapter.ClientOptions{Auth: mcpadapter.PrincipalToken(func(_ context.Context, p string) (string, error) {
			if p == mallory {
				return testserver.PerUserToken("mallory"), nil
			}
			return testserver.PerUserToken(p), nil
		})})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		alice := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "alice", Headers: map[string]string{"X-Tenant": "a"}})
		for _, who := range []struct {
			ctx  context.Context
			name string
		}{{alice, "alice"}, {as(ctx, mallory), "mallory"}} {
			res, err := c.CallTool(who.ctx, "whoami", nil, nil)
			if err != nil {
				t.Errorf("whoami for %s: %v", who.name, err)
				continue
			}
			if res.Text() != who.name {
				t.Errorf("whoami for %s answered %q", who.name, res.Text())
			}
			info, err := c.Connect(who.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := "instructions for " + who.name; info.Instructions != want {
				t.Errorf("Connect for %s: instructions %q, want %q", who.name, info.Instructions, want)
			}
		}
	})
}

// TestTenantHeadersGetTheirOwnConnection: a server that tells tenants
// apart by a header and writes each tenant's instructions when its session
// starts: the same principal (and no principal) under two tenant headers
// is shown each tenant's own instructions.
func TestTenantHeadersGetTheirOwnConnection(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
			return mcp.NewServer(&mcp.Implementation{Name: "tenants", Version: "1"},
				&mcp.ServerOptions{Instructions: "instructions for " + r.Header.Get("X-Tenant")})
		}, &mcp.StreamableHTTPOptions{Stateless: stateless})
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		c, err := mcpadapter.NewClient(hs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, p := range []string{"alice", ""} {
			for _, tenant := range []string{"acme", "globex"} {
				tctx := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p, Headers: map[string]string{"X-Tenant": tenant}})
				info, err := c.Connect(tctx)
				if err != nil {
					t.Fatal(err)
				}
				if want := "instructions for " + tenant; info.Instructions != want {
					t.Errorf("stateless=%v: Connect for %q of tenant %s: %q, want %q", stateless, p, tenant, info.Instructions, want)
				}
			}
		}
	}
}
