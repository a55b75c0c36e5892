package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a server that records every request it gets (method, path,
// Authorization and body) and answers with what a token endpoint and a
// metadata document would, so that a client that follows it would go on.
func recorder(t *testing.T) (url string, hits *lockedBuffer) {
	t.Helper()
	hits = &lockedBuffer{}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(hits, "%s %s %q %s\n", r.Method, r.URL.Path, r.Header.Get("Authorization"), body)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token"})
			return
		}
		_, _ = io.WriteString(w, `{"access_token":"evil","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// startRedirecting starts a server that answers every request with a 307
// to the same path at to, and returns its URL.
func startRedirecting(t *testing.T, to string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestIDJAGRedirected: an identity provider or authorization server whose
// token endpoint, or whose metadata, redirects elsewhere gets the
// principal CodeUpstreamAuth; the redirect's target gets nothing (no
// principal's token, no ID-JAG, no secret of either client, no metadata
// request), and neither the error nor the logs quote a token or secret.
func TestIDJAGRedirected(t *testing.T) {
	evil, hits := recorder(t)
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil+"/token", http.StatusTemporaryRedirect)
	}
	text := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>no</html>") }
	plain := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil))
	t.Cleanup(plain.Close)
	names := []string{"idptoken", "astoken", "idpmeta", "asmeta"}
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		fwd := e.as.URL + "/token"     // the gateway's own token, for its listings
		pairs := map[string][2]string{ // server -> identity provider, authorization server
			"idptoken": {startScriptedIssuer(t, fwd, redirect), startScriptedIssuer(t, fwd, text)},
			"astoken":  {e.idp.URL, startScriptedIssuer(t, fwd, redirect)},
			"idpmeta":  {startRedirecting(t, evil), startScriptedIssuer(t, fwd, text)},
			"asmeta":   {e.idp.URL, startRedirecting(t, evil)},
		}
		var out []gateway.Server
		for _, name := range names {
			p := pairs[name]
			out = append(out, gateway.Server{Name: name, Target: plain.URL, Exchange: &mcpadapter.TokenExchange{
				Issuer: p[0], ClientID: xchgClient, ClientSecret: idpSecret, Scopes: []string{testauth.BaseScope},
				IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: p[1], ClientID: xchgClient, ClientSecret: xchgSecret}}})
		}
		return out
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.token(t, "alice")
	cs := e.sdkClient(t, ctx, alice)
	for _, name := range names {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_whoami", Arguments: map[string]any{}})
		if err == nil {
			t.Errorf("%s: the call went", name)
			continue
		}
		t.Logf("%s: %v", name, err)
		for _, s := range []string{alice, idpSecret, xchgSecret, "eyJ"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error quotes a token or secret: %v", name, err)
			}
		}
	}
	if h := hits.String(); h != "" {
		t.Errorf("the redirects' target was sent:\n%s", h)
	}
	for _, s := range []string{alice, idpSecret, xchgSecret, base64.StdEncoding.EncodeToString([]byte(xchgClient + ":" + xchgSecret))} {
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("the logs quote a token or secret")
		}
	}
}

// TestIDJAGServerNamesAnother: a server whose protected resource metadata
// names only its own authorization server, not the one configured, is
// refused: the principal's call gets an error naming both, and neither
// the authorization server it names, nor the identity provider, nor the
// configured one, gets anything; the server gets no request for the
// principal.
func TestIDJAGServerNamesAnother(t *testing.T) {
	var configured, named *testauth.Server
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		// named: the hostile server's own authorization server, which it
		// names in its metadata, taking any ID-JAG of idp's.
		named = testauth.Start(t, testauth.Options{MCP: whoami(), ClientID: crmClient, ClientSecret: crmSecret, NoRegistration: true,
			NoPKCE: true, AssertionKey: e.idp.PublicKey()})
		configured = testauth.Start(t, testauth.Options{ClientID: crmClient, ClientSecret: crmSecret, NoRegistration: true,
			NoPKCE: true, AssertionKey: e.idp.PublicKey()})
		return []gateway.Server{{Name: "hostile", Config: &mcpadapter.ServerConfig{Name: "hostile", URL: named.MCPURL, Transport: "http",
			Auth: &mcpadapter.ServerAuth{Grant: &mcpadapter.GrantSettings{Type: "token_exchange", Grant: "id-jag",
				Issuer: e.idp.URL, ClientID: xchgClient, ClientSecret: idpSecret,
				AuthorizationServer: configured.URL, ASClientID: crmClient, ASClientSecret: crmSecret, Scopes: []string{testauth.BaseScope}}}}}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asked := len(e.idp.TokenRequests())
	alice := e.token(t, "alice")
	cs := e.sdkClient(t, ctx, alice)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hostile_whoami", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("the call to a server naming another authorization server went")
	}
	// The gateway's own token is refused too (no listing), so the tool
	// may be unknown; when the call reached the exchange, its error names
	// both authorization servers.
	if msg := err.Error(); strings.Contains(msg, "hostile") && strings.Contains(msg, "credential") &&
		(!strings.Contains(msg, named.URL) || !strings.Contains(msg, configured.URL)) {
		t.Errorf("the error %q does not name both authorization servers", msg)
	}
	if n := len(e.idp.TokenRequests()) - asked; n != 0 {
		t.Errorf("the identity provider got %d requests for a server naming another authorization server", n)
	}
	if n, m := len(named.TokenRequests()), len(configured.TokenRequests()); n != 0 || m != 0 {
		t.Errorf("token requests: %d at the authorization server the server names, %d at the configured one; want none", n, m)
	}
	for _, r := range named.Requests() {
		if r.User == "alice" || strings.Contains(r.Authorization, alice) {
			t.Errorf("the server got a request for alice: %q", r.Authorization)
		}
	}
}

// TestIDJAGEchoes: an identity provider and an authorization server that
// refuse, echoing in error_description what they were sent (the
// principal's token, the ID-JAG, the client's secret from its Basic
// header): the principal's error and the gateway's logs quote none of it.
func TestIDJAGEchoes(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		_, secret, _ := r.BasicAuth()
		desc := fmt.Sprintf("refused subject_token=%s assertion=%s secret=%s", r.PostForm.Get("subject_token"), r.PostForm.Get("assertion"), secret)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": desc})
	}
	plain := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil))
	t.Cleanup(plain.Close)
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		fwd := e.as.URL + "/token"
		mk := func(name, idp, as string) gateway.Server {
			return gateway.Server{Name: name, Target: plain.URL, Exchange: &mcpadapter.TokenExchange{
				Issuer: idp, ClientID: xchgClient, ClientSecret: idpSecret, Scopes: []string{testauth.BaseScope},
				IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: as, ClientID: xchgClient, ClientSecret: xchgSecret}}}
		}
		return []gateway.Server{
			mk("idpecho", startScriptedIssuer(t, fwd, echo), startScriptedIssuer(t, fwd, echo)),
			mk("asecho", e.idp.URL, startScriptedIssuer(t, fwd, echo)),
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.token(t, "alice")
	cs := e.sdkClient(t, ctx, alice)
	for _, name := range []string{"idpecho", "asecho"} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_whoami", Arguments: map[string]any{}})
		msg := upstreamAuthError(t, name, err, `server "`+name+`"`, "invalid_grant")
		for _, s := range []string{alice, idpSecret, xchgSecret, "eyJ"} {
			if strings.Contains(msg, s) {
				t.Errorf("%s: the error quotes a token or secret: %s", name, msg)
			}
		}
	}
	for _, s := range []string{alice, idpSecret, xchgSecret, "eyJ"} {
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("the logs quote a token or secret (%.12s...)", s)
		}
	}
}

// TestIDJAGMetadataRedirect: a server whose protected resource metadata
// URLs redirect to another loopback service (an internal one, which the
// gateway can reach and the server cannot) does not make the gateway
// send that service anything: the metadata is read from the server
// itself or not at all, and the principal's call goes on as for a server
// with no metadata.
func TestIDJAGMetadataRedirect(t *testing.T) {
	internal, hits := recorder(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil)
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.Redirect(w, r, internal+"/admin/flush?all=1", http.StatusFound)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hostile.Close)
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		return []gateway.Server{{Name: "hostile", Target: hostile.URL + "/mcp", Exchange: &mcpadapter.TokenExchange{
			Issuer: e.idp.URL, ClientID: xchgClient, ClientSecret: idpSecret, Scopes: []string{testauth.BaseScope},
			IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: e.up.URL, ClientID: crmClient, ClientSecret: crmSecret}}}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := e.sdkClient(t, ctx, e.token(t, "alice"))
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hostile_whoami", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if h := hits.String(); h != "" {
		t.Errorf("the server's redirect made the gateway send the internal service:\n%s", h)
	}
}

// TestIDJAGRefusedForGood: a server that answers 401 to every token of a
// principal's (however new) costs each of that principal's calls one more
// ID-JAG flow at most and at most two requests, never a loop, and the
// call fails quoting no token; another principal's calls meanwhile go
// with their own token, which is not made again; once the server takes
// the principal's tokens again, its calls go.
func TestIDJAGRefusedForGood(t *testing.T) {
	e := startIDJAG(t, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice, bob := e.token(t, "alice"), e.token(t, "bob")
	ac, bc := e.sdkClient(t, ctx, alice), e.sdkClient(t, ctx, bob)
	call := func(cs *mcp.ClientSession) (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("error result: %v", res.Content)
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	for _, cs := range []*mcp.ClientSession{ac, bc} {
		if _, err := call(cs); err != nil {
			t.Fatal(err)
		}
	}
	e.up.RefuseUser("alice", true)
	for i := range 3 {
		flows, grants, seen := e.idp.Exchanges(), e.up.Counts().JWTBearer, len(e.up.Requests())
		start := time.Now()
		_, err := call(ac)
		if err == nil {
			t.Fatalf("call %d: alice's call went while the server refuses her tokens", i)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("call %d took %v", i, took)
		}
		for _, s := range []string{alice, idpSecret, crmSecret, "eyJ"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("call %d: the error quotes a token or secret: %v", i, err)
			}
		}
		if n, m := e.idp.Exchanges()-flows, e.up.Counts().JWTBearer-grants; n > 1 || m > 1 {
			t.Errorf("call %d: %d ID-JAGs and %d JWT bearer grants, want 1 at most", i, n, m)
		}
		if n := len(e.up.Requests()) - seen; n > 2 {
			t.Errorf("call %d: the server got %d requests, want 2 at most", i, n)
		}
		bobFlows := e.idp.Exchanges()
		authz, err := call(bc)
		if err != nil || mustUserAt(t, e.up, authz) != "bob" {
			t.Fatalf("bob's call while alice is refused: %v", err)
		}
		if n := e.idp.Exchanges() - bobFlows; n != 0 {
			t.Errorf("bob's token made again (%d flows) by alice's refusals", n)
		}
	}
	e.up.RefuseUser("alice", false)
	if authz, err := call(ac); err != nil || mustUserAt(t, e.up, authz) != "alice" {
		t.Fatalf("alice's call once the server takes her tokens again: %v", err)
	}
}

// TestIDJAGSecretsApart: each secret goes to its own server only: the
// identity provider (recorded in front of testauth's) gets the
// principal's token and the gateway's secret there, never the secret at
// the server's authorization server; that authorization server (which
// checks its client's secret) gets the ID-JAG and its own secret, never
// the principal's token or the identity provider's secret; the server
// gets neither the principal's token nor an ID-JAG.
func TestIDJAGSecretsApart(t *testing.T) {
	var seen lockedBuffer
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		idp := startScriptedIssuer(t, e.as.URL+"/token", func(w http.ResponseWriter, r *http.Request) {
			id, secret, _ := r.BasicAuth()
			fmt.Fprintf(&seen, "basic=%s:%s form=%s\n", id, secret, r.PostForm.Encode())
			req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, e.idp.URL+"/token", strings.NewReader(r.PostForm.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
		})
		return []gateway.Server{{Name: "apart", Config: &mcpadapter.ServerConfig{Name: "apart", URL: e.up.MCPURL, Transport: "http",
			Auth: &mcpadapter.ServerAuth{Grant: &mcpadapter.GrantSettings{Type: "token_exchange", Grant: "id-jag",
				Issuer: idp, ClientID: xchgClient, ClientSecret: idpSecret,
				AuthorizationServer: e.up.URL, ASClientID: crmClient, ASClientSecret: crmSecret, Scopes: []string{testauth.BaseScope}}}}}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.token(t, "alice")
	res, err := e.sdkClient(t, ctx, alice).CallTool(ctx, &mcp.CallToolParams{Name: "apart_whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	authz := res.Content[0].(*mcp.TextContent).Text
	if mustUserAt(t, e.up, authz) != "alice" {
		t.Errorf("the call reached the server as another")
	}
	got := seen.String()
	if !strings.Contains(got, "basic="+xchgClient+":"+idpSecret) || !strings.Contains(got, "subject_token=") {
		t.Errorf("the identity provider did not get the exchange as asked:\n%s", got)
	}
	if strings.Contains(got, crmSecret) || strings.Contains(got, crmClient) {
		t.Errorf("the identity provider got the client or secret at the server's authorization server:\n%s", got)
	}
	for _, f := range e.up.TokenRequests() {
		enc := f.Encode()
		if strings.Contains(enc, alice) || strings.Contains(enc, idpSecret) || strings.Contains(enc, "subject_token") {
			t.Errorf("the server's authorization server got the principal's token or the identity provider's secret: %s", enc)
		}
	}
	for _, r := range e.up.Requests() {
		if strings.Contains(r.Authorization, alice) {
			t.Errorf("the server got the principal's token")
		}
		if j, err := oauthflow.ParseJWT(strings.TrimPrefix(r.Authorization, "Bearer ")); err == nil && j.Claims["iss"] == e.idp.URL {
			t.Errorf("the server got an ID-JAG")
		}
	}
}

// TestIDJAGMetadataNamesAnother: an identity provider or authorization
// server whose metadata names another issuer, and a token endpoint there,
// gets the principal an error naming it; the issuer and endpoint it names
// get nothing.
func TestIDJAGMetadataNamesAnother(t *testing.T) {
	evil, hits := recorder(t)
	lying := func() string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": evil, "token_endpoint": evil + "/token"})
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	plain := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil))
	t.Cleanup(plain.Close)
	var idpLies string
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		fwd := e.as.URL + "/token"
		idpLies = lying()
		mk := func(name, idp, as string) gateway.Server {
			return gateway.Server{Name: name, Target: plain.URL, Exchange: &mcpadapter.TokenExchange{
				Issuer: idp, ClientID: xchgClient, ClientSecret: idpSecret, Scopes: []string{testauth.BaseScope},
				IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: as, ClientID: xchgClient, ClientSecret: xchgSecret}}}
		}
		return []gateway.Server{
			mk("idplies", idpLies, startScriptedIssuer(t, fwd, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", 400) })),
			mk("aslies", e.idp.URL, lying()),
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := e.sdkClient(t, ctx, e.token(t, "alice"))
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "idplies_whoami", Arguments: map[string]any{}})
	upstreamAuthError(t, "an identity provider naming another issuer", err, `server "idplies"`, idpLies, evil)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "aslies_whoami", Arguments: map[string]any{}}); err == nil {
		t.Error("the call to a server whose authorization server names another issuer went")
	}
	if h := hits.String(); h != "" {
		t.Errorf("the issuer the metadata names was sent:\n%s", h)
	}
}

// TestIDJAGForOthersToo: an ID-JAG the identity provider issues for the
// configured authorization server and another (aud a list), or for the
// server and another resource, is an assertion another authorization
// server would take: it is not presented (the server's authorization
// server, were it hostile, could replay it there), and the call gets
// CodeUpstreamAuth saying why.
func TestIDJAGForOthersToo(t *testing.T) {
	e := startIDJAG(t, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, c := range []struct {
		claims map[string]any
		says   string
	}{
		{map[string]any{"aud": []any{e.up.URL, "https://payroll-as.example"}}, "audience"},
		{map[string]any{"resource": []any{e.up.MCPURL, "https://payroll.example/mcp"}}, "resource"},
	} {
		e.idp.SetClaims(c.claims)
		cs := e.sdkClient(t, ctx, e.token(t, fmt.Sprintf("user%d", i))) // a principal with no token yet
		grants := e.up.Counts().JWTBearer
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != gateway.CodeUpstreamAuth || !strings.Contains(rpc.Message, c.says) {
			t.Errorf("%v: %v, want CodeUpstreamAuth saying %q", c.claims, err, c.says)
		}
		if n := e.up.Counts().JWTBearer - grants; n != 0 {
			t.Errorf("%v: presented (%d JWT bearer grants)", c.claims, n)
		}
	}
	e.idp.SetClaims(map[string]any{"aud": []any{e.up.URL}, "resource": []any{e.up.MCPURL}})
	if res, err := e.sdkClient(t, ctx, e.token(t, "alice")).CallTool(ctx, &mcp.CallToolParams{Name: "crm_whoami", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("an ID-JAG whose lists name only the authorization server and the server: %v %v", err, res)
	}
}

// TestIDJAGIdPAnswers: an identity provider that answers the exchange with
// a token of another type than an ID-JAG (an access token for the very
// authorization server), with no token, with a token that is no JWT, or
// with one of 900 KiB, gets the principal CodeUpstreamAuth at once; the
// authorization server is presented nothing.
func TestIDJAGIdPAnswers(t *testing.T) {
	var asGot lockedBuffer
	var asURL string
	jwtFor := func(aud string) string {
		enc := base64.RawURLEncoding.EncodeToString
		claims, _ := json.Marshal(map[string]any{"iss": "idp", "sub": "alice", "aud": aud, "exp": time.Now().Add(time.Hour).Unix()})
		return enc([]byte(`{"alg":"ES256"}`)) + "." + enc(claims) + ".c2ln"
	}
	answer := func(body func() map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(body())
		}
	}
	answers := map[string]http.HandlerFunc{
		"accesstoken": answer(func() map[string]any {
			return map[string]any{"access_token": jwtFor(asURL), "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer"}
		}),
		"notoken": answer(func() map[string]any {
			return map[string]any{"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}
		}),
		"notjwt": answer(func() map[string]any {
			return map[string]any{"access_token": "opaque-grant", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}
		}),
		"huge": answer(func() map[string]any {
			return map[string]any{"access_token": strings.Repeat("a", 900<<10), "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}
		}),
	}
	plain := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil))
	t.Cleanup(plain.Close)
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		fwd := e.as.URL + "/token"
		asURL = startScriptedIssuer(t, fwd, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(&asGot, "%s\n", r.PostForm.Encode())
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		})
		var out []gateway.Server
		for name, a := range answers {
			out = append(out, gateway.Server{Name: name, Target: plain.URL, Exchange: &mcpadapter.TokenExchange{
				Issuer: startScriptedIssuer(t, fwd, a), ClientID: xchgClient, ClientSecret: idpSecret, Scopes: []string{testauth.BaseScope},
				IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: asURL, ClientID: xchgClient, ClientSecret: xchgSecret}}})
		}
		return out
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := e.sdkClient(t, ctx, e.token(t, "alice"))
	for name := range answers {
		start := time.Now()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_whoami", Arguments: map[string]any{}})
		msg := upstreamAuthError(t, name, err, `server "`+name+`"`)
		if took := time.Since(start); took > 5*time.Second || len(msg) > 2000 {
			t.Errorf("%s: an error of %d bytes after %v", name, len(msg), took)
		}
	}
	if got := asGot.String(); got != "" {
		t.Errorf("the authorization server was presented something:\n%s", got)
	}
}

// TestIDJAGServerRedirects: a server that redirects a principal's request
// to another origin (307, which keeps the method and body) does not get
// the principal's token sent there.
func TestIDJAGServerRedirects(t *testing.T) {
	evil, hits := recorder(t)
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil)
		hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"tools/call"`) {
				http.Redirect(w, r, evil+"/mcp", http.StatusTemporaryRedirect)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(hostile.Close)
		return []gateway.Server{{Name: "hostile", Target: hostile.URL + "/mcp", Exchange: &mcpadapter.TokenExchange{
			Issuer: e.idp.URL, ClientID: xchgClient, ClientSecret: idpSecret, Scopes: []string{testauth.BaseScope}, Resource: e.up.MCPURL,
			IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: e.up.URL, ClientID: crmClient, ClientSecret: crmSecret}}}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, _ = e.sdkClient(t, ctx, e.token(t, "alice")).CallTool(ctx, &mcp.CallToolParams{Name: "hostile_whoami", Arguments: map[string]any{}})
	if n := e.up.Counts().JWTBearer; n == 0 {
		t.Fatal("no token was made for alice: the test shows nothing")
	}
	for _, line := range strings.Split(hits.String(), "\n") {
		if strings.Contains(line, "Bearer") {
			t.Errorf("the redirect's target got a token: %s", line)
		}
	}
}
