package oauthflow

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/asn1"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

func asn1Unmarshal(der []byte, v any) ([]byte, error) { return asn1.Unmarshal(der, v) }

// JWT is a decoded compact JWS.
type JWT struct {
	Header map[string]any
	Claims map[string]any
	input  string // header.payload, the signed text
	sig    []byte
}

// ParseJWT decodes a compact JWS without verifying it. Its errors say
// which part is malformed, never the token.
func ParseJWT(token string) (*JWT, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("a JWT has 3 dot-separated parts, this has %d", len(parts))
	}
	var j JWT
	for i, dst := range []*map[string]any{&j.Header, &j.Claims} {
		raw, err := b64.DecodeString(parts[i])
		if err != nil {
			return nil, fmt.Errorf("JWT part %d is not base64url: %w", i+1, err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return nil, fmt.Errorf("JWT part %d is not a JSON object: %w", i+1, err)
		}
		if *dst == nil {
			return nil, fmt.Errorf("JWT part %d is not a JSON object", i+1)
		}
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("the JWT signature is not base64url: %w", err)
	}
	j.input, j.sig = parts[0]+"."+parts[1], sig
	return &j, nil
}

// Verify checks the signature with pub, for the algorithm in the header.
func (j *JWT) Verify(pub crypto.PublicKey) error {
	alg, _ := j.Header["alg"].(string)
	hf, hh := hashFor(alg)
	hh.Write([]byte(j.input))
	digest := hh.Sum(nil)
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		want := map[string]elliptic.Curve{"ES256": elliptic.P256(), "ES384": elliptic.P384()}[alg]
		if want == nil || want != k.Curve {
			return fmt.Errorf("JWT alg %q does not fit the key", alg)
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		if len(j.sig) != 2*size {
			return errors.New("the JWT signature has the wrong length")
		}
		r, s := new(big.Int).SetBytes(j.sig[:size]), new(big.Int).SetBytes(j.sig[size:])
		if !ecdsa.Verify(k, digest, r, s) {
			return errors.New("the JWT signature does not verify")
		}
		return nil
	case *rsa.PublicKey:
		if alg != "RS256" {
			return fmt.Errorf("JWT alg %q does not fit the key", alg)
		}
		if err := rsa.VerifyPKCS1v15(k, hf, digest, j.sig); err != nil {
			return errors.New("the JWT signature does not verify")
		}
		return nil
	}
	return fmt.Errorf("a %T key is not supported", pub)
}

// JWKPublicKey is the public key of a JWK as PublicJWK writes it (EC P-256
// or P-384, or RSA); a JWK with a private member ("d") is refused.
func JWKPublicKey(jwk map[string]any) (crypto.PublicKey, error) {
	if _, ok := jwk["d"]; ok {
		return nil, errors.New("the JWK holds a private key")
	}
	num := func(name string) (*big.Int, error) {
		s, _ := jwk[name].(string)
		raw, err := b64.DecodeString(s)
		if err != nil || len(raw) == 0 {
			return nil, fmt.Errorf("JWK member %q is not base64url", name)
		}
		return new(big.Int).SetBytes(raw), nil
	}
	switch jwk["kty"] {
	case "EC":
		curve := map[any]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384()}[jwk["crv"]]
		if curve == nil {
			return nil, fmt.Errorf("JWK curve %v is not supported", jwk["crv"])
		}
		x, err := num("x")
		if err != nil {
			return nil, err
		}
		y, err := num("y")
		if err != nil {
			return nil, err
		}
		size := (curve.Params().BitSize + 7) / 8
		raw := make([]byte, 1+2*size)
		raw[0] = 4
		if x.BitLen() > 8*size || y.BitLen() > 8*size {
			return nil, errors.New("JWK coordinates are too long")
		}
		x.FillBytes(raw[1 : 1+size])
		y.FillBytes(raw[1+size:])
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, raw)
		if err != nil {
			return nil, fmt.Errorf("JWK point: %w", err)
		}
		return pub, nil
	case "RSA":
		n, err := num("n")
		if err != nil {
			return nil, err
		}
		e, err := num("e")
		if err != nil {
			return nil, err
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31 || n.BitLen() < 2048 {
			return nil, errors.New("JWK RSA key is not acceptable")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	}
	return nil, fmt.Errorf("JWK kty %v is not supported", jwk["kty"])
}
