package gateway

import "testing"

// TestWithoutAddresses: the error text a browser is shown keeps why and
// loses where.
func TestWithoutAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"exchanging the code: token endpoint http://127.0.0.1:38819/token: HTTP 400 invalid_grant": "exchanging the code: token endpoint (an address): HTTP 400 invalid_grant",
		"recording the sign-in in the token store: dial tcp [::1]:6379: connection refused":        "recording the sign-in in the token store: dial tcp (an address): connection refused",
		"in redis 10.0.0.7:6379: i/o timeout":                                                      "in redis (an address): i/o timeout",
		"store redis.internal:6379 is down":                                                        "store (an address) is down",
		"the sign-in was started for another user: the state is not this user's":                   "the sign-in was started for another user: the state is not this user's",
	} {
		if got := withoutAddresses(in); got != want {
			t.Errorf("withoutAddresses(%q) = %q, want %q", in, got, want)
		}
	}
}
