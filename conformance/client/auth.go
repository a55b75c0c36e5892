package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

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
		// A secret goes only to the issuer it is registered with: the
		// suite names it in the context.
		o.ClientID, o.ClientSecret, o.Issuer = sc.ClientID, sc.ClientSecret, sc.Issuer
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
	issuer, err := suiteIssuer(ctx, serverURL, sc)
	if err != nil {
		return err
	}
	a := &mcpadapter.ClientCredentials{Issuer: issuer, ClientID: sc.ClientID, PrivateKey: key}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{Auth: a}, callTestTool(ctx))
}

// runWorkloadIdentity (auth/wif-jwt-bearer) authorizes with the JWT bearer
// grant and the workload's identity token (mcpadapter.JWTBearer).
func runWorkloadIdentity(ctx context.Context, serverURL string, sc scenarioContext) error {
	issuer, err := suiteIssuer(ctx, serverURL, sc)
	if err != nil {
		return err
	}
	a := &mcpadapter.JWTBearer{
		Issuer:    issuer,
		ClientID:  sc.ClientID,
		Assertion: func(context.Context) (string, error) { return sc.ValidJWT, nil },
	}
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{Auth: a}, callTestTool(ctx))
}

// runEnterprise (auth/enterprise-managed-authorization) exchanges the
// user's ID token at the identity provider for an ID-JAG and presents it in
// a JWT bearer grant (mcpadapter.EnterpriseAuth).
func runEnterprise(ctx context.Context, serverURL string, sc scenarioContext) error {
	issuer, err := suiteIssuer(ctx, serverURL, sc)
	if err != nil {
		return err
	}
	a := &mcpadapter.EnterpriseAuth{
		Issuer:       issuer,
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

// suiteIssuer returns the authorization server the suite's credentials
// are for. The grants send their credentials only to an issuer set in
// advance (mcpadapter.ClientCredentials.Issuer and the others), which a
// deployment knows; the suite starts its authorization server on a port
// of its choosing and names it in the context only for some scenarios.
// Otherwise this driver, trusting the suite, reads it from the server's
// protected resource metadata before the client starts: the step a user
// takes when they look up their authorization server.
func suiteIssuer(ctx context.Context, serverURL string, sc scenarioContext) (string, error) {
	if sc.Issuer != "" {
		return sc.Issuer, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("looking up the suite's issuer: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var urls []string
	if cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
		for _, c := range cs {
			if u := c.Params["resource_metadata"]; u != "" {
				urls = append(urls, u)
			}
		}
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/.well-known/oauth-protected-resource" + u.Path
	urls = append(urls, u.String())
	for _, mu := range urls {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, mu, serverURL, http.DefaultClient)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm.AuthorizationServers[0], nil
		}
	}
	return "", errors.New("the suite's server names no authorization server")
}
