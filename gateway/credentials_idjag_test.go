package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	idpSecret = "idp-secret-7d2c90aa41"
	crmClient = "gw-at-crm"
	crmSecret = "crm-as-secret-3b81f6d0"
)

// idjagEnv is xchgEnv with a server "crm" whose credential comes by the
// ID-JAG flow: the principal's token (of the gateway's authorization
// server, xchgEnv.as) is exchanged at the identity provider idp for an
// ID-JAG for crm's own authorization server, up (testauth, which trusts
// idp's key and protects crm), and presented there.
type idjagEnv struct {
	*xchgEnv
	idp *testauth.IdP
	up  *testauth.Server
}

// startIDJAG starts an idjagEnv, the tokens of up living for ttl (0: an
// hour), with the servers of extra, if not nil, besides crm.
func startIDJAG(t *testing.T, ttl time.Duration, extra func(*idjagEnv) []gateway.Server) *idjagEnv {
	t.Helper()
	e := &idjagEnv{idp: testauth.StartIdP(t, "unused")}
	e.up = testauth.Start(t, testauth.Options{MCP: whoami(), ClientID: crmClient, ClientSecret: crmSecret, NoRegistration: true, NoPKCE: true,
		AssertionKey: e.idp.PublicKey(), TokenTTL: ttl})
	e.xchgEnv = startXchg(t, nil, func(x *xchgEnv) []gateway.Server {
		e.idp.AcceptAccessTokens(x.as)
		e.xchgEnv = x
		servers := []gateway.Server{{Name: "crm", Config: &mcpadapter.ServerConfig{Name: "crm", URL: e.up.MCPURL, Transport: "http",
			Auth: &mcpadapter.ServerAuth{Grant: &mcpadapter.GrantSettings{Type: "token_exchange", Grant: "id-jag",
				Issuer: e.idp.URL, ClientID: xchgClient, ClientSecret: idpSecret,
				AuthorizationServer: e.up.URL, ASClientID: crmClient, ASClientSecret: crmSecret, Scopes: []string{testauth.BaseScope}}}}}}
		if extra != nil {
			servers = append(servers, extra(e)...)
		}
		return servers
	})
	return e
}

// TestIDJAGPerPrincipal: two principals at once, one with mcpadapter's
// own Client, one with go-sdk's: each call reaches the server with a
// token its authorization server issued for the principal's own subject,
// by an ID-JAG the identity provider issued for the principal's token
// (subject_token_type access_token) naming that authorization server and
// the server; one flow per principal while its token is valid, however
// many of its calls ask at once. The
// clients' tokens go to the identity provider only; no secret is logged.
func TestIDJAGPerPrincipal(t *testing.T) {
	e := startIDJAG(t, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice, bob := e.token(t, "alice"), e.token(t, "bob")
	own := e.ownClient(t, alice)
	sdk := e.sdkClient(t, ctx, bob)
	got := make([][]string, 2)
	errs := make([]error, 2)
	done := make(chan struct{})
	for i := range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 3 {
				var res *mcp.CallToolResult
				var err error
				if i == 0 {
					res, err = own.RelayCall(ctx, &mcp.CallToolParams{Name: "crm_whoami"}, nil)
				} else {
					res, err = sdk.CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
				}
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = append(got[i], res.Content[0].(*mcp.TextContent).Text)
			}
		}()
	}
	<-done
	<-done
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, user := range []string{"alice", "bob"} {
		for _, authz := range got[i] {
			if u := mustUserAt(t, e.up, authz); u != user {
				t.Errorf("%s's call reached the server as %q", user, u)
			}
		}
	}
	if n, m := e.idp.Exchanges(), e.up.Counts().JWTBearer; n != 2 || m != 2 {
		t.Errorf("%d ID-JAGs and %d JWT bearer grants for 2 principals' 6 calls, want 2 and 2", n, m)
	}
	for _, f := range e.idp.TokenRequests() {
		if f.Get("subject_token_type") != oauthflow.TokenTypeAccessToken || f.Get("audience") != e.up.URL || f.Get("resource") != e.up.MCPURL {
			t.Errorf("the identity provider was asked for %v", f)
		}
		if f.Has("client_secret") || f.Has("assertion") {
			t.Errorf("a secret in the identity provider's form")
		}
	}
	for _, r := range e.up.Requests() {
		if strings.Contains(r.Authorization, alice) || strings.Contains(r.Authorization, bob) {
			t.Errorf("a client's own token reached the server")
		}
	}
	for _, f := range e.up.TokenRequests() {
		for _, v := range f {
			if strings.Contains(strings.Join(v, " "), alice) || strings.Contains(strings.Join(v, " "), bob) || strings.Contains(strings.Join(v, " "), idpSecret) {
				t.Errorf("the server's authorization server got a client's token or the identity provider's secret")
			}
		}
	}
	// Five calls of a third principal at once: one flow.
	carol := e.sdkClient(t, ctx, e.token(t, "carol"))
	before := e.idp.Exchanges()
	errc := make(chan error, 5)
	for range 5 {
		go func() {
			_, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
			errc <- err
		}()
	}
	for range 5 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if n := e.idp.Exchanges() - before; n != 1 {
		t.Errorf("%d ID-JAGs for 5 calls of one principal at once, want 1", n)
	}
	for _, s := range []string{alice, bob, idpSecret, crmSecret} {
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("a secret is in the gateway's logs")
		}
	}
}

// TestIDJAGForAnother: an ID-JAG the identity provider issues for another
// audience or another resource than asked is not presented: the call gets
// CodeUpstreamAuth naming the server and the claim, the server's
// authorization server gets no grant and the server no request for the
// principal; when the identity provider issues right again, the call goes.
func TestIDJAGForAnother(t *testing.T) {
	e := startIDJAG(t, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.token(t, "alice")
	cs := e.sdkClient(t, ctx, alice)
	for _, c := range []struct {
		claims map[string]any
		says   string
	}{
		{map[string]any{"aud": "https://elsewhere.example"}, "audience"},
		{map[string]any{"resource": "https://elsewhere.example/mcp"}, "resource"},
	} {
		e.idp.SetClaims(c.claims)
		grants, seen := e.up.Counts().JWTBearer, len(e.up.Requests())
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
		upstreamAuthError(t, "an ID-JAG for another "+c.says, err, `server "crm"`, c.says, "not sent", e.idp.URL)
		if n := e.up.Counts().JWTBearer - grants; n != 0 {
			t.Errorf("%v: %d JWT bearer grants made with it", c.claims, n)
		}
		for _, r := range e.up.Requests()[seen:] {
			if r.User == "alice" {
				t.Errorf("%v: the server got a request for alice", c.claims)
			}
		}
	}
	e.idp.SetClaims(nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError || mustUserAt(t, e.up, res.Content[0].(*mcp.TextContent).Text) != "alice" {
		t.Fatalf("after the identity provider issues right again: %v %v", err, res)
	}
}

// TestIDJAGRefused: the authorization server refusing the ID-JAG gets the
// principal CodeUpstreamAuth naming the server, that authorization server
// and the OAuth error, quoting no token or secret.
func TestIDJAGRefused(t *testing.T) {
	e := startIDJAG(t, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e.idp.SetClaims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}) // the AS refuses it (expired)
	alice := e.token(t, "alice")
	_, err := e.sdkClient(t, ctx, alice).CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
	msg := upstreamAuthError(t, "an expired ID-JAG", err, `server "crm"`, "token exchange at "+e.up.URL, "invalid_grant")
	for _, s := range []string{alice, idpSecret, crmSecret, "eyJ"} {
		if strings.Contains(msg, s) {
			t.Errorf("the error quotes a token or secret")
		}
	}
	for _, s := range []string{alice, idpSecret, crmSecret} {
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("the logs quote a token or secret")
		}
	}
}

// TestIDJAGRenewed: the principal's token is used until shortly before it
// expires, then made again by a new ID-JAG; one the server answers 401 to
// (revoked before it expires) is forgotten and made again, the call going
// on with the new one.
func TestIDJAGRenewed(t *testing.T) {
	e := startIDJAG(t, 31*time.Second, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := e.sdkClient(t, ctx, e.token(t, "alice"))
	var seen []string
	for i := range 4 {
		switch i {
		case 2:
			e.up.RevokeUser("alice")
		case 3:
			time.Sleep(1200 * time.Millisecond) // past the expiry, less the margin
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i, err, res)
		}
		authz := res.Content[0].(*mcp.TextContent).Text
		if u := mustUserAt(t, e.up, authz); u != "alice" {
			t.Errorf("call %d reached the server as %q", i, u)
		}
		seen = append(seen, authz)
	}
	if seen[0] != seen[1] || seen[1] == seen[2] || seen[2] == seen[3] {
		t.Errorf("tokens %q: want the first reused, then a new one after the 401, then after the expiry", seen)
	}
	if n, m := e.idp.Exchanges(), e.up.Counts().JWTBearer; n != 3 || m != 3 {
		t.Errorf("%d ID-JAGs and %d JWT bearer grants, want 3 and 3", n, m)
	}
}
