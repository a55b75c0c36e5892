package mcpadapter_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestConfigClientCredentialsKeyFile: a config server entry with
// "type": "client_credentials" and a private key file, and a DPoP key
// file, signs in with no user and binds its token.
func TestConfigClientCredentialsKeyFile(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	key := newKey(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "svc", ClientKey: key.Public(), NoRegistration: true, DPoP: true})
	dir := t.TempDir()
	keyFile, dpopFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "dpop.pem")
	if err := os.WriteFile(keyFile, keyPEM(t, key), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dpopFile, keyPEM(t, newKey(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpadapter.ParseConfig(fmt.Appendf(nil, `{"mcpServers": {"svc": {"url": %q,
		"auth": {"type": "client_credentials", "issuer": %q, "clientId": "svc", "privateKeyFile": %q, "dpopKeyFile": %q}}}}`, as.MCPURL, as.URL, keyFile, dpopFile))
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.Servers[0].Auth.Grant; g == nil || g.Type != "client_credentials" || g.PrivateKeyFile != keyFile {
		t.Fatalf("parsed auth %+v", cfg.Servers[0].Auth)
	}
	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	mustCall(t, ctx, tools["echo"], `{"text":"x"}`)
	if c := as.Counts(); c.ClientCredentials != 1 || c.DPoPTokens != 1 {
		t.Errorf("counts %+v", c)
	}
}

// TestConfigGrantErrors: a grant auth object that cannot work is an error
// naming the JSON path.
func TestConfigGrantErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ auth, want string }{
		{`{"type": "client_credentials", "issuer": "https://as.example", "clientId": "a"}`, `mcpServers.s.auth: a "client_credentials" auth object needs "clientSecret" or "privateKeyFile"`},
		{`{"type": "client_credentials", "clientId": "a", "clientSecret": "s"}`, `mcpServers.s.auth: a "client_credentials" auth object needs "issuer"`},
		{`{"type": "jwt_bearer", "clientId": "a", "assertionFile": "/x"}`, `a "jwt_bearer" auth object needs "issuer"`},
		{`{"type": "jwt_bearer", "issuer": "https://as.example", "clientId": "a", "assertionFile": "/x", "idTokenFile": "/y"}`, `mcpServers.s.auth.idTokenFile: unknown member "idTokenFile"`},
		{`{"type": "client_credentials", "issuer": "https://as.example", "clientId": "a", "clientSecret": "s", "assertionFile": "/etc/passwd"}`, `mcpServers.s.auth.assertionFile: unknown member "assertionFile"`},
		{`{"type": "enterprise", "issuer": "https://as.example", "clientId": "a", "idTokenFile": "/t"}`, `needs "idpTokenUrl" or "idpIssuer"`},
		{`{"type": "oauth", "clientId": "a", "clientSecret": "s"}`, `"clientSecret" needs "issuer"`},
		{`{"type": "sso"}`, `unknown auth type "sso"`},
	} {
		_, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {"s": {"url": "https://example.com/mcp", "auth": ` + tc.auth + `}}}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.auth, err, tc.want)
		}
	}
	// A key file that is not a key: the error names the member and the
	// file, never the file's content.
	bad := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(bad, []byte("not-a-key-SECRETCONTENT"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpadapter.ParseConfig(fmt.Appendf(nil, `{"mcpServers": {"s": {"url": "https://example.com/mcp", "auth": {"type": "client_credentials", "issuer": "https://as.example", "clientId": "a", "privateKeyFile": %q}}}}`, bad))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcpadapter.NewGroup(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "mcpServers.s.auth") || !strings.Contains(err.Error(), "privateKeyFile") || strings.Contains(err.Error(), "SECRETCONTENT") {
		t.Errorf("bad key file: %v", err)
	}
}
