package oauthflow

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSignVerifyRoundTrip(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	r2048, _ := rsa.GenerateKey(rand.Reader, 2048)
	for _, key := range []crypto.Signer{p256, p384, r2048} {
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		parsed, err := ParsePrivateKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := SignJWT(parsed, map[string]any{"typ": "JWT"}, map[string]any{"sub": "x"})
		if err != nil {
			t.Fatal(err)
		}
		j, err := ParseJWT(tok)
		if err != nil {
			t.Fatal(err)
		}
		jwk, _ := PublicJWK(parsed)
		pub, err := JWKPublicKey(jwk)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Verify(pub); err != nil || j.Claims["sub"] != "x" {
			t.Errorf("%T: verify %v, claims %v", key, err, j.Claims)
		}
		other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if j.Verify(other.Public()) == nil {
			t.Errorf("%T: verified with another key", key)
		}
	}
}

func TestParsePrivateKeyPEMErrorsHideTheKey(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, data := range [][]byte{
		[]byte("garbage SECRET"),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("SECRET")}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(small)}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")}),
	} {
		_, err := ParsePrivateKeyPEM(data)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%q: %v", data[:10], err)
		}
	}
}

func TestDPoPProof(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, err := NewDPoP(key)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("https://Example.com:8443/mcp?x=1#f")
	proof, err := d.Proof("POST", u, "tok", "n1")
	if err != nil {
		t.Fatal(err)
	}
	j, err := ParseJWT(proof)
	if err != nil {
		t.Fatal(err)
	}
	jwk, _ := j.Header["jwk"].(map[string]any)
	pub, err := JWKPublicKey(jwk)
	if err != nil || j.Verify(pub) != nil {
		t.Fatalf("the proof does not verify with its own jwk: %v", err)
	}
	c := j.Claims
	if j.Header["typ"] != "dpop+jwt" || c["htm"] != "POST" || c["htu"] != "https://Example.com:8443/mcp" || c["nonce"] != "n1" ||
		c["ath"] != "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI" || c["jti"] == "" {
		t.Errorf("proof %v %v", j.Header, c)
	}
	if iat, _ := c["iat"].(float64); time.Since(time.Unix(int64(iat), 0)).Abs() > time.Minute {
		t.Errorf("iat %v", c["iat"])
	}
	if _, ok := jwk["d"]; ok {
		t.Error("the proof's jwk holds the private key")
	}
}

func TestUseDPoPNonce(t *testing.T) {
	if !UseDPoPNonce([]string{`DPoP error="use_dpop_nonce", error_description="Resource server requires nonce"`}) {
		t.Error("a use_dpop_nonce challenge was missed")
	}
	if UseDPoPNonce([]string{`Bearer error="use_dpop_nonce"`}) || UseDPoPNonce([]string{`DPoP error="invalid_token"`}) {
		t.Error("not a DPoP nonce challenge")
	}
}

// FuzzParseJWT: no input panics the JWT decoder or the verifier.
func FuzzParseJWT(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tok, _ := SignJWT(key, map[string]any{"jwk": map[string]any{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}}, map[string]any{"a": 1})
	f.Add(tok)
	f.Add("e30.e30.")
	f.Add("a.b")
	f.Fuzz(func(t *testing.T, s string) {
		j, err := ParseJWT(s)
		if err != nil {
			return
		}
		_ = j.Verify(key.Public())
		if jwk, ok := j.Header["jwk"].(map[string]any); ok {
			if pub, err := JWKPublicKey(jwk); err == nil {
				_ = j.Verify(pub)
				_, _ = Thumbprint(jwk)
			}
		}
	})
}

// FuzzDPoPNonce: a nonce is accepted only when every byte is an NQCHAR,
// and challenges of any shape are read without panicking.
func FuzzDPoPNonce(f *testing.F) {
	f.Add("conformance-as-dpop-nonce", `DPoP error="use_dpop_nonce", resource_metadata="https://x"`)
	f.Add("a\"b", `DPoP realm="x", error=use_dpop_nonce`)
	f.Add("", `Bearer, DPoP`)
	f.Fuzz(func(t *testing.T, nonce, challenge string) {
		n, ok := ParseDPoPNonce(nonce)
		if ok {
			if n != nonce || len(n) == 0 || strings.ContainsAny(n, "\"\\ \t\r\n") {
				t.Errorf("accepted %q", nonce)
			}
			for i := 0; i < len(n); i++ {
				if n[i] < 0x21 || n[i] > 0x7e {
					t.Errorf("accepted byte %#x", n[i])
				}
			}
		}
		_ = UseDPoPNonce([]string{challenge})
	})
}

func TestTokenErrorHidesEchoedJWT(t *testing.T) {
	e := &TokenError{Endpoint: "https://as/token", Status: 400, Code: "invalid_grant",
		Description: "bad assertion eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln here"}
	if msg := e.Error(); strings.Contains(msg, "eyJ") || !strings.Contains(msg, "invalid_grant") || !strings.Contains(msg, "[a JWT]") {
		t.Errorf("%s", msg)
	}
}
