package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authScenarios are the OAuth authorization-code scenarios. Of the suite's
// auth extensions (which it runs but does not score) only
// auth/client-credentials-basic is handled, by runClientCredentials:
// go-sdk has no client for private_key_jwt, DPoP or workload identity
// federation, and its enterprise-managed handler needs an oauth2.Token
// built by the caller (see ../README.md).
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

// redirectURL is the client's registered redirect URI. Nothing listens
// there: the suite's authorization server redirects at once, and
// fetchAuthorizationCode reads the code from the Location header.
const redirectURL = "http://localhost:3000/callback"

// runAuth connects through go-sdk's OAuth authorization-code handler
// (client ID metadata document, dynamic registration, or the
// pre-registered client the suite passes in the context), then lists tools
// and calls test-tool.
func runAuth(ctx context.Context, serverURL string, sc scenarioContext) error {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirectURL,
		AuthorizationCodeFetcher: fetchAuthorizationCode,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{
			URL: "https://conformance-test.local/client-metadata.json",
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirectURL}},
		},
	}
	if sc.ClientID != "" && sc.ClientSecret != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{
			ClientID:         sc.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: sc.ClientSecret},
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return fmt.Errorf("auth.NewAuthorizationCodeHandler: %w", err)
	}
	return listAndCallTestTool(ctx, serverURL, h)
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
	return listAndCallTestTool(ctx, serverURL, h)
}

// listAndCallTestTool connects with h authorizing the requests, lists
// tools and calls test-tool.
func listAndCallTestTool(ctx context.Context, serverURL string, h auth.OAuthHandler) error {
	return withTools(ctx, serverURL, mcpadapter.ClientOptions{OAuthHandler: h}, func(c *mcpadapter.Client, byName map[string]*mcpadapter.Tool, _ []*mcpadapter.Tool) error {
		if _, ok := byName["test-tool"]; ok {
			_, err := call(ctx, byName, "test-tool", nil)
			return err
		}
		// Not listed: call it by name anyway, as go-sdk's client does.
		res, err := c.CallTool(ctx, "test-tool", nil)
		if err != nil {
			return fmt.Errorf("Client.CallTool(%q): %w", "test-tool", err)
		}
		if res.IsError {
			return fmt.Errorf("Client.CallTool(%q): tool error: %s", "test-tool", res.Text())
		}
		return nil
	})
}

// fetchAuthorizationCode follows the authorization URL as a browser would,
// up to the redirect to redirectURL, and takes the code, state and issuer
// from it. The suite's authorization server redirects at once.
func fetchAuthorizationCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, fmt.Errorf("authorization redirect: %w", err)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
