package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authScenarios are the OAuth authorization-code scenarios. The suite's
// auth extensions have drivers of their own (runClientCredentials and the
// functions after it).
var authScenarios = []string{
	"auth/2025-03-26-oauth-metadata-backcompat",
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/authorization-server-migration",
	"auth/basic-cimd",
	"auth/iss-normalized",
	"auth/iss-not-advertised",
	"auth/iss-supported",
	"auth/iss-supported-missing",
	"auth/iss-unexpected",
	"auth/iss-wrong-issuer",
	"auth/metadata-default",
	"auth/metadata-issuer-mismatch",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/offline-access-not-supported",
	"auth/offline-access-scope",
	"auth/pre-registration",
	"auth/resource-mismatch",
	"auth/scope-from-scopes-supported",
	"auth/scope-from-www-authenticate",
	"auth/scope-omitted-when-undefined",
	"auth/scope-retry-limit",
	"auth/scope-step-up",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-none",
	"auth/token-endpoint-auth-post",
}

// runAuth connects with the adapter's own OAuth flow (mcpadapter.OAuth:
// a client ID metadata document, dynamic registration, or the
// pre-registered client the suite passes in the context, with the redirect
// served on loopback), then lists tools and calls test-tool. The suite's
// authorization server redirects at once, so the "browser" only follows
// the authorization URL.
func runAuth(ctx context.Context, serverURL string, sc scenarioContext) error {
	o := &mcpadapter.OAuth{
		ClientIDMetadataURL: "https://conformance-test.local/client-metadata.json",
		OpenURL:             followAuthorizationURL,
	}
	if sc.ClientID != "" && sc.ClientSecret != "" {
		o.ClientID, o.ClientSecret = sc.ClientID, sc.ClientSecret
	}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{Auth: o}, callTestTool(ctx))
}

// runClientCredentials (auth/client-credentials-basic, an extension the
// suite does not score) authorizes with the client_credentials grant and
// client_secret_basic, through go-sdk's extauth handler, with the
// credentials the suite passes in the context.
func runClientCredentials(ctx context.Context, serverURL string, sc scenarioContext) error {
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{
			ClientID:         sc.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: sc.ClientSecret},
		},
	})
	if err != nil {
		return fmt.Errorf("extauth.NewClientCredentialsHandler: %w", err)
	}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{OAuthHandler: h}, callTestTool(ctx))
}

// runClientCredentialsJWT (auth/client-credentials-jwt) authorizes with
// the client credentials grant and a private key JWT client assertion
// (mcpadapter.ClientCredentials with PrivateKey), with the key the suite
// passes in the context.
func runClientCredentialsJWT(ctx context.Context, serverURL string, sc scenarioContext) error {
	key, err := mcpadapter.ParsePrivateKeyPEM([]byte(sc.PrivateKeyPEM))
	if err != nil {
		return fmt.Errorf("private_key_pem: %w", err)
	}
	a := &mcpadapter.ClientCredentials{ClientID: sc.ClientID, PrivateKey: key}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{Auth: a}, callTestTool(ctx))
}

// runWorkloadIdentity (auth/wif-jwt-bearer) authorizes with the JWT bearer
// grant and the workload's identity token (mcpadapter.JWTBearer).
func runWorkloadIdentity(ctx context.Context, serverURL string, sc scenarioContext) error {
	a := &mcpadapter.JWTBearer{
		ClientID:  sc.ClientID,
		Assertion: func(context.Context) (string, error) { return sc.ValidJWT, nil },
	}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{Auth: a}, callTestTool(ctx))
}

// runEnterprise (auth/enterprise-managed-authorization) exchanges the
// user's ID token at the identity provider for an ID-JAG and presents it in
// a JWT bearer grant (mcpadapter.EnterpriseAuth).
func runEnterprise(ctx context.Context, serverURL string, sc scenarioContext) error {
	a := &mcpadapter.EnterpriseAuth{
		IDToken:      func(context.Context) (string, error) { return sc.IdPIDToken, nil },
		IdPTokenURL:  sc.IdPTokenEndpoint,
		IdPIssuer:    sc.IdPIssuer,
		IdPClientID:  sc.IdPClientID,
		ClientID:     sc.ClientID,
		ClientSecret: sc.ClientSecret,
	}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{Auth: a}, callTestTool(ctx))
}

// runDPoP (auth/dpop, auth/dpop-nonce) is the authorization code flow of
// runAuth with DPoP-bound tokens (OAuth.DPoPKey).
func runDPoP(ctx context.Context, serverURL string, sc scenarioContext) error {
	key, err := mcpadapter.NewDPoPKey()
	if err != nil {
		return err
	}
	o := &mcpadapter.OAuth{
		ClientIDMetadataURL: "https://conformance-test.local/client-metadata.json",
		OpenURL:             followAuthorizationURL,
		DPoPKey:             key,
	}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{Auth: o}, callTestTool(ctx))
}

// callTestTool calls test-tool, listed or not.
func callTestTool(ctx context.Context) func(*mcpadapter.Client, map[string]*mcpadapter.Tool, []*mcpadapter.Tool) error {
	return func(c *mcpadapter.Client, byName map[string]*mcpadapter.Tool, _ []*mcpadapter.Tool) error {
		if _, ok := byName["test-tool"]; ok {
			_, err := call(ctx, byName, "test-tool", nil)
			return err
		}
		// Not listed: call it by name anyway, as go-sdk's client does.
		res, err := c.CallTool(ctx, "test-tool", nil, nil)
		if err != nil {
			return fmt.Errorf("Client.CallTool(%q): %w", "test-tool", err)
		}
		if res.IsError {
			return fmt.Errorf("Client.CallTool(%q): tool error: %s", "test-tool", res.Text())
		}
		return nil
	}
}

// followAuthorizationURL plays the browser: it follows the authorization
// URL and its redirects, the last of which reaches the client's loopback
// redirect server.
func followAuthorizationURL(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}
