package mcpadapter_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// grantClient returns an adapter for url authorized by auth, logging at
// debug level with the protocol trace into logs.
func grantClient(t *testing.T, url string, auth mcpadapter.Auth, logs io.Writer) *mcpadapter.Adapter {
	t.Helper()
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
		Auth: auth, ConnectTimeout: 10 * time.Second, Trace: true,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyPEM is key in PKCS #8 PEM, as a key file holds it.
func keyPEM(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// noSecrets fails if any secret appears in text.
func noSecrets(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s holds a secret (%.12s...)", what, s)
		}
	}
}

// TestClientCredentialsPrivateKeyJWT: the client credentials grant with a
// private key JWT assertion, the key read from PEM; the server verifies
// the assertion (iss, sub, aud, signature) before it issues a token.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	key := newKey(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "svc", ClientKey: key.Public(), NoRegistration: true})
	parsed, err := mcpadapter.ParsePrivateKeyPEM(keyPEM(t, key))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := grantClient(t, as.MCPURL, &mcpadapter.ClientCredentials{Issuer: as.URL, ClientID: "svc", PrivateKey: parsed}, &logs)
	tools := toolMap(t, ctx, a)
	if got := mustCall(t, ctx, tools["echo"], `{"text":"as a service"}`).Text(); got != "as a service" {
		t.Errorf("echo: %q", got)
	}
	if c := as.Counts(); c.ClientCredentials != 1 || c.Authorizations != 0 {
		t.Errorf("counts %+v: want one client_credentials grant and no user", c)
	}

	// Another key: the server refuses the assertion, and the error says
	// so, naming the server, without the assertion.
	var logs2 bytes.Buffer
	b := grantClient(t, as.MCPURL, &mcpadapter.ClientCredentials{Issuer: as.URL, ClientID: "svc", PrivateKey: newKey(t)}, &logs2)
	_, err = b.Tools(ctx)
	var ae *mcpadapter.AuthorizationError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("wrong key: %v (want an *AuthorizationError with invalid_client)", err)
	}
	for _, text := range []string{logs.String(), logs2.String(), err.Error()} {
		if strings.Contains(text, "client_assertion=") || strings.Contains(text, "eyJ") {
			t.Errorf("a log or error holds an assertion: %.300s", text[max(0, strings.Index(text, "eyJ")-100):])
		}
	}
}

// TestClientCredentialsSecret: the client credentials grant with a
// secret (HTTP Basic).
func TestClientCredentialsSecret(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "svc", ClientSecret: "s3cret-value", NoRegistration: true})
	var logs bytes.Buffer
	a := grantClient(t, as.MCPURL, &mcpadapter.ClientCredentials{Issuer: as.URL, ClientID: "svc", ClientSecret: "s3cret-value"}, &logs)
	tools := toolMap(t, ctx, a)
	mustCall(t, ctx, tools["echo"], `{"text":"x"}`)
	if c := as.Counts(); c.ClientCredentials != 1 {
		t.Errorf("counts %+v", c)
	}
	noSecrets(t, "the log", logs.String(), "s3cret-value")
}

// TestWorkloadIdentityJWTBearer: a workload token read from a file is the
// assertion of a JWT bearer grant; an expired token is refused once, with
// the error surfaced and no other grant tried.
func TestWorkloadIdentityJWTBearer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	issuer := newKey(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "workload", AssertionKey: issuer.Public(), NoRegistration: true})
	sign := func(exp time.Time) string {
		tok, err := oauthflow.SignJWT(issuer, nil, map[string]any{"iss": "https://idp.example", "sub": "ci-job", "aud": as.URL, "exp": exp.Unix(), "iat": time.Now().Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	file := filepath.Join(t.TempDir(), "token")
	valid := sign(time.Now().Add(time.Hour))
	if err := os.WriteFile(file, []byte(valid+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := grantClient(t, as.MCPURL, &mcpadapter.JWTBearer{Issuer: as.URL, ClientID: "workload", Assertion: mcpadapter.AssertionFile(file)}, &logs)
	tools := toolMap(t, ctx, a)
	mustCall(t, ctx, tools["echo"], `{"text":"x"}`)
	if c := as.Counts(); c.JWTBearer != 1 {
		t.Errorf("counts %+v", c)
	}

	expired := sign(time.Now().Add(-time.Hour))
	var logs2 bytes.Buffer
	b := grantClient(t, as.MCPURL, &mcpadapter.JWTBearer{Issuer: as.URL, ClientID: "workload", Assertion: func(context.Context) (string, error) { return expired, nil }}, &logs2)
	_, err := b.Tools(ctx)
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("expired assertion: %v (want invalid_grant)", err)
	}
	if c := as.Counts(); c.JWTBearer != 1 || c.ClientCredentials != 0 || c.Authorizations != 0 {
		t.Errorf("after the refusal: counts %+v (no retry, no other grant)", c)
	}
	noSecrets(t, "logs and the error", logs.String()+logs2.String()+err.Error(), valid, expired)
}

// TestEnterpriseManagedAuthorization: the user's ID token is exchanged at
// the IdP for an ID-JAG, presented in a JWT bearer grant.
func TestEnterpriseManagedAuthorization(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	idp := testauth.StartIdP(t, "idp-app")
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "mcp-app", ClientSecret: "app-secret", AssertionKey: idp.PublicKey(), NoRegistration: true})
	idToken := idp.IDToken(t, "alice@example.com")
	var logs bytes.Buffer
	a := grantClient(t, as.MCPURL, &mcpadapter.EnterpriseAuth{
		Issuer:      as.URL,
		IDToken:     func(context.Context) (string, error) { return idToken, nil },
		IdPTokenURL: idp.URL + "/token", IdPClientID: "idp-app",
		ClientID: "mcp-app", ClientSecret: "app-secret",
	}, &logs)
	tools := toolMap(t, ctx, a)
	mustCall(t, ctx, tools["echo"], `{"text":"x"}`)
	if idp.Exchanges() != 1 || as.Counts().JWTBearer != 1 {
		t.Errorf("exchanges %d, counts %+v", idp.Exchanges(), as.Counts())
	}
	noSecrets(t, "the log", logs.String(), idToken, "app-secret")

	// An ID token the IdP did not issue: the exchange fails and says where.
	forged := testauth.StartIdP(t, "idp-app").IDToken(t, "mallory")
	b := grantClient(t, as.MCPURL, &mcpadapter.EnterpriseAuth{
		Issuer:      as.URL,
		IDToken:     func(context.Context) (string, error) { return forged, nil },
		IdPTokenURL: idp.URL + "/token", IdPClientID: "idp-app",
		ClientID: "mcp-app", ClientSecret: "app-secret",
	}, io.Discard)
	_, err := b.Tools(ctx)
	if err == nil || !strings.Contains(err.Error(), "token exchange") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("forged ID token: %v", err)
	}
	noSecrets(t, "the error", err.Error(), forged, "app-secret")
}

// TestDPoPWithNonces: the authorization code flow with a DPoP key, against
// a server that demands a nonce at the token endpoint and at the MCP
// endpoint: the token is bound, presented as "DPoP" with a fresh proof on
// each request, and no proof or key reaches the logs.
func TestDPoPWithNonces(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), DPoP: true, DPoPNonce: "n-123"})
	key, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	user := &browser{}
	var logs bytes.Buffer
	a := oauthClient(t, as.MCPURL, &mcpadapter.OAuth{OpenURL: user.open, DPoPKey: key}, &logs)
	tools := toolMap(t, ctx, a)
	for range 2 {
		mustCall(t, ctx, tools["echo"], `{"text":"bound"}`)
	}
	c := as.Counts()
	if c.DPoPTokens != 1 || c.NonceChallenges < 2 {
		t.Errorf("counts %+v: want one DPoP token and nonce challenges at both servers", c)
	}
	var dpop int
	for _, h := range as.AuthorizationHeaders() {
		if strings.HasPrefix(h, "Bearer ") {
			t.Errorf("a bound token was sent as Bearer")
		}
		if strings.HasPrefix(h, "DPoP ") {
			dpop++
		}
	}
	if dpop < 3 {
		t.Errorf("%d requests with DPoP authorization, want every MCP request after sign-in", dpop)
	}
	if strings.Contains(logs.String(), "dpop+jwt") || strings.Contains(logs.String(), "eyJ") {
		t.Errorf("the log holds a DPoP proof")
	}
}

// TestGrantStepUpMergesScopes: a 403 insufficient_scope asking for one
// more scope runs the grant again with the scopes granted before and the
// new one (the server asks only for the one missing); a plain 403 is the
// server's answer and runs no grant.
func TestGrantStepUpMergesScopes(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "svc", ClientSecret: "s3cret",
		NoRegistration: true, AdminTool: "add", ForbidTool: "image"})
	a := grantClient(t, as.MCPURL, &mcpadapter.ClientCredentials{Issuer: as.URL, ClientID: "svc", ClientSecret: "s3cret"}, io.Discard)
	tools := toolMap(t, ctx, a)
	mustCall(t, ctx, tools["echo"], `{"text":"x"}`)
	mustCall(t, ctx, tools["add"], `{"a":1,"b":2}`)
	mustCall(t, ctx, tools["echo"], `{"text":"still allowed"}`)
	reqs := as.TokenRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d token requests, want 2 (the first grant and one step-up)", len(reqs))
	}
	if got := strings.Fields(reqs[1].Get("scope")); !slices.Contains(got, testauth.BaseScope) || !slices.Contains(got, testauth.AdminScope) {
		t.Errorf("the step-up asked for %q: want the scope granted before and the new one", got)
	}
	_, err := tools["image"].Call(ctx, json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), "403") && !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a plain 403: %v", err)
	}
	if n := len(as.TokenRequests()); n != 2 {
		t.Errorf("a plain 403 ran the grant again (%d token requests)", n)
	}
}

// TestGrantNoPKCERequired: the grants work with an authorization server
// whose metadata advertises no PKCE (only the authorization code grant
// uses it).
func TestGrantNoPKCERequired(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "svc", ClientSecret: "s3cret", NoRegistration: true, NoPKCE: true})
	a := grantClient(t, as.MCPURL, &mcpadapter.ClientCredentials{Issuer: as.URL, ClientID: "svc", ClientSecret: "s3cret"}, io.Discard)
	mustCall(t, ctx, toolMap(t, ctx, a)["echo"], `{"text":"x"}`)
}
