package config

import (
	"strings"
	"testing"
)

// TestGrantIssuerAndMembers: a grant object needs "issuer", and a member
// of another grant type (a file another flow would read) is a problem at
// its path; "inheritEnv" takes names, prefixes and "*".
func TestGrantIssuerAndMembers(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"mcpServers":{"s":{"url":"https://h/mcp","auth":{"type":"client_credentials","clientId":"c","clientSecret":"x"}}}}`,
			`mcpServers.s.auth: a "client_credentials" auth object needs "issuer"`},
		{`{"mcpServers":{"s":{"url":"https://h/mcp","auth":{"type":"enterprise","issuer":"https://as","clientId":"c","idpIssuer":"https://idp","idTokenFile":"/t","assertionFile":"/etc/passwd"}}}}`,
			`mcpServers.s.auth.assertionFile: unknown member "assertionFile" of a "enterprise" auth object`},
		{`{"mcpServers":{"s":{"url":"https://h/mcp","auth":{"type":"oauth","clientId":"c","clientSecret":"x"}}}}`,
			`"clientSecret" needs "issuer"`},
		{`{"mcpServers":{"s":{"command":"x","inheritEnv":["AWS_*","1X"]}}}`,
			`mcpServers.s.inheritEnv[1]: "1X": want a variable name`},
		{`{"mcpServers":{"s":{"url":"https://h/mcp","inheritEnv":["A"]}}}`,
			`inheritEnv`},
	} {
		_, problems := Parse([]byte(tc.doc), Options{})
		var all []string
		for _, p := range problems {
			all = append(all, p.String())
		}
		if !strings.Contains(strings.Join(all, "\n"), tc.want) {
			t.Errorf("%s:\n%s\nwant %q", tc.doc, strings.Join(all, "\n"), tc.want)
		}
	}
	doc, problems := Parse([]byte(`{"mcpServers":{"s":{"command":"x","inheritEnv":["AWS_*","*","HOME"]},
		"g":{"url":"https://h/mcp","auth":{"type":"jwt_bearer","issuer":"https://as.example","clientId":"c","assertionFile":"/t"}}}}`), Options{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if got := strings.Join(doc.Servers[0].InheritEnv, " "); got != "AWS_* * HOME" {
		t.Errorf("inheritEnv %q", got)
	}
	if g := doc.Servers[1].Auth.Grant; g == nil || g.Issuer != "https://as.example" || g.AssertionFile != "/t" {
		t.Errorf("grant %+v", doc.Servers[1].Auth)
	}
}
