package gateway

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
)

// TestRedactorGrantSecrets: the client secrets of a config's grants (the
// client's at the authorization server, the client's at the identity
// provider, an ID-JAG exchange's at the server's authorization server, in
// a config entry or a Server's Exchange) are blanked out of what the gateway shows its clients, like
// an OAuth client secret: an authorization server's error that repeats one
// reaches no client of the gateway.
func TestRedactorGrantSecrets(t *testing.T) {
	const clientSecret, idpSecret, oauthSecret = "grant-client-secret-1", "idp-client-secret-2", "oauth-client-secret-3"
	const jagSecret, jagGoSecret = "as-client-secret-4", "as-client-secret-5"
	r := newRedactor([]Server{
		{Config: &mcpadapter.ServerConfig{Name: "cc", URL: "https://mcp.example/mcp", Auth: &mcpadapter.ServerAuth{
			Grant: &mcpadapter.GrantSettings{Type: "client_credentials", Issuer: "https://as.example", ClientID: "svc", ClientSecret: clientSecret}}}},
		{Config: &mcpadapter.ServerConfig{Name: "ent", URL: "https://mcp.example/mcp", Auth: &mcpadapter.ServerAuth{
			Grant: &mcpadapter.GrantSettings{Type: "enterprise", Issuer: "https://as.example", ClientID: "app", IdPClientSecret: idpSecret}}}},
		{Config: &mcpadapter.ServerConfig{Name: "code", URL: "https://mcp.example/mcp", Auth: &mcpadapter.ServerAuth{
			OAuth: &mcpadapter.OAuthSettings{ClientID: "cli", ClientSecret: oauthSecret}}}},
		{Config: &mcpadapter.ServerConfig{Name: "jag", URL: "https://mcp.example/mcp", Auth: &mcpadapter.ServerAuth{
			Grant: &mcpadapter.GrantSettings{Type: "token_exchange", Grant: "id-jag", Issuer: "https://idp.example", ClientID: "gw",
				AuthorizationServer: "https://as.example", ASClientSecret: jagSecret}}}},
		{Name: "jag2", Target: "https://mcp.example/mcp", Exchange: &mcpadapter.TokenExchange{Issuer: "https://idp.example", ClientID: "gw",
			IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: "https://as.example", ClientSecret: jagGoSecret}}},
	})
	for _, secret := range []string{clientSecret, idpSecret, oauthSecret, jagSecret, jagGoSecret} {
		err := r.err(errors.New(`authorizing with cc: token endpoint https://as.example/token: HTTP 401 invalid_client ("client secret ` + secret + ` is wrong")`))
		if strings.Contains(err.Error(), secret) {
			t.Errorf("shown to the gateway's clients: %v", err)
		}
	}
}
