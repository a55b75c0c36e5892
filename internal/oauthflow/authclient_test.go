package oauthflow

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAuthServerClientKeepsAddressCheck: the client for authorization
// servers refuses private and link-local addresses a server names, with
// and without the DPoP transport above it (go-sdk switches its own check
// off for any transport but a plain *http.Transport), except on the hosts
// the user named.
func TestAuthServerClientKeepsAddressCheck(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, key := range map[string]crypto.Signer{"plain": nil, "dpop": key} {
		_, hc := AuthServerClient(nil, key, "10.255.255.2")
		for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://10.255.255.1:9/.well-known/oauth-authorization-server"} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			resp, err := hc.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "non-public address") {
				t.Errorf("%s: %s: %v, want a refusal", name, u, err)
			}
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		req, _ := http.NewRequestWithContext(short, http.MethodGet, "http://10.255.255.2:9/", nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
		} else if strings.Contains(err.Error(), "non-public address") {
			t.Errorf("%s: a host the user named was refused: %v", name, err)
		}
		cancel()
	}
}
