package gateway

import "testing"

// TestWithoutAddresses: the error text a browser is shown keeps why and
// loses where.
func TestWithoutAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"exchanging the code: token endpoint http://127.0.0.1:38819/token: HTTP 400 invalid_grant":                                     "exchanging the code: token endpoint (an address): HTTP 400 invalid_grant",
		"recording the sign-in in the token store: dial tcp [::1]:6379: connection refused":                                            "recording the sign-in in the token store: dial tcp (an address): connection refused",
		"in redis 10.0.0.7:6379: i/o timeout":                                                                                          "in redis (an address): i/o timeout",
		"store redis.internal:6379 is down":                                                                                            "store (an address) is down",
		"the sign-in was started for another user: the state is not this user's":                                                       "the sign-in was started for another user: the state is not this user's",
		`exchanging the code: Post "https://as.internal.corp/token": dial tcp: lookup as.internal.corp on 127.0.0.53:53: no such host`: `exchanging the code: Post "(an address)": dial tcp: lookup (an address) on (an address): no such host`,
		"saving the token: dial tcp: lookup redis on 10.96.0.10:53: server misbehaving":                                                "saving the token: dial tcp: lookup (an address) on (an address): server misbehaving",
		"tls: failed to verify certificate: x509: certificate is valid for a.internal.corp, b.internal.corp, not as.example":           "tls: failed to verify certificate: x509: certificate is valid for (an address), (an address), not (an address)",
		"saving the token: failed to connect to 10.1.2.3:5432 (pg.internal.corp): dial error: timeout":                                 "saving the token: failed to connect to (an address) ((an address)): dial error: timeout",
		"saving the token: dial tcp fd00::5:6379: i/o timeout":                                                                         "saving the token: dial tcp (an address): i/o timeout",
		"the authorization server refused: access_denied: the user said no (see docs.example.org)":                                     "the authorization server refused: access_denied: the user said no (see (an address))",
		"token endpoint (the token endpoint): HTTP 400 invalid_grant":                                                                  "token endpoint (the token endpoint): HTTP 400 invalid_grant",
	} {
		if got := withoutAddresses(in); got != want {
			t.Errorf("withoutAddresses(%q) = %q, want %q", in, got, want)
		}
	}
}
