package oauthflow

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"strings"
)

// The JWS compact serialization (RFC 7515) of the few algorithms a client
// signs with: ES256, ES384 (ECDSA P-256 and P-384) and RS256. Keys,
// assertions and proofs are secrets: no error here quotes one.

var b64 = base64.RawURLEncoding

// ParsePrivateKeyPEM reads a PEM private key (PKCS #8, SEC 1 "EC PRIVATE
// KEY" or PKCS #1 "RSA PRIVATE KEY") that can sign JWTs: ECDSA P-256 or
// P-384, or RSA of at least 2048 bits.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block of type %q is not a private key", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing the %s: %w", block.Type, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T cannot sign", key)
	}
	if _, err := Alg(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Alg is the JWS algorithm key signs with.
func Alg(key crypto.Signer) (string, error) {
	switch pub := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch pub.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		}
		return "", fmt.Errorf("ECDSA curve %s is not supported (P-256 or P-384)", pub.Curve.Params().Name)
	case *rsa.PublicKey:
		if pub.N.BitLen() < 2048 {
			return "", fmt.Errorf("an RSA key of %d bits is too small (2048 at least)", pub.N.BitLen())
		}
		return "RS256", nil
	}
	return "", fmt.Errorf("a %T key is not supported (ECDSA P-256, P-384 or RSA)", key.Public())
}

// SignJWT signs claims with key. header gets "alg" set; its other fields
// ("typ", "jwk", "kid") are the caller's.
func SignJWT(key crypto.Signer, header, claims map[string]any) (string, error) {
	alg, err := Alg(key)
	if err != nil {
		return "", err
	}
	h := map[string]any{"alg": alg}
	for k, v := range header {
		h[k] = v
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("encoding the JWT header: %w", err)
	}
	cj, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("encoding the JWT claims: %w", err)
	}
	input := b64.EncodeToString(hj) + "." + b64.EncodeToString(cj)
	hf, hh := hashFor(alg)
	hh.Write([]byte(input))
	digest := hh.Sum(nil)
	var sig []byte
	switch pub := key.Public().(type) {
	case *ecdsa.PublicKey:
		der, err := key.Sign(rand.Reader, digest, hf)
		if err != nil {
			return "", fmt.Errorf("signing the JWT: %w", err)
		}
		if sig, err = ecdsaRaw(der, (pub.Curve.Params().BitSize+7)/8); err != nil {
			return "", err
		}
	default:
		if sig, err = key.Sign(rand.Reader, digest, hf); err != nil {
			return "", fmt.Errorf("signing the JWT: %w", err)
		}
	}
	return input + "." + b64.EncodeToString(sig), nil
}

func hashFor(alg string) (crypto.Hash, hash.Hash) {
	if alg == "ES384" {
		return crypto.SHA384, sha512.New384()
	}
	return crypto.SHA256, sha256.New()
}

// ecdsaRaw turns an ASN.1 ECDSA signature into JWS's r||s, each size bytes.
func ecdsaRaw(der []byte, size int) ([]byte, error) {
	var rs struct{ R, S *big.Int }
	if _, err := asn1Unmarshal(der, &rs); err != nil {
		return nil, fmt.Errorf("decoding the ECDSA signature: %w", err)
	}
	out := make([]byte, 2*size)
	rs.R.FillBytes(out[:size])
	rs.S.FillBytes(out[size:])
	return out, nil
}

// PublicJWK is the public half of key as a JWK (RFC 7517), with only the
// members its thumbprint uses.
func PublicJWK(key crypto.Signer) (map[string]any, error) {
	switch pub := key.Public().(type) {
	case *ecdsa.PublicKey:
		size := (pub.Curve.Params().BitSize + 7) / 8
		ecdh, err := pub.ECDH()
		if err != nil {
			return nil, fmt.Errorf("the ECDSA key: %w", err)
		}
		raw := ecdh.Bytes() // 0x04 || X || Y
		return map[string]any{"kty": "EC", "crv": pub.Curve.Params().Name,
			"x": b64.EncodeToString(raw[1 : 1+size]), "y": b64.EncodeToString(raw[1+size:])}, nil
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "n": b64.EncodeToString(pub.N.Bytes()),
			"e": b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}, nil
	}
	return nil, fmt.Errorf("a %T key is not supported", key.Public())
}

// Thumbprint is the base64url SHA-256 JWK thumbprint (RFC 7638) of a
// public JWK as PublicJWK returns it.
func Thumbprint(jwk map[string]any) (string, error) {
	var members []string
	switch jwk["kty"] {
	case "EC":
		members = []string{"crv", "kty", "x", "y"}
	case "RSA":
		members = []string{"e", "kty", "n"}
	default:
		return "", fmt.Errorf("JWK kty %v is not supported", jwk["kty"])
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range members {
		v, ok := jwk[m].(string)
		if !ok {
			return "", fmt.Errorf("JWK member %q is missing", m)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(m)
		vj, _ := json.Marshal(v)
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
	}
	b.WriteByte('}')
	sum := sha256.Sum256([]byte(b.String()))
	return b64.EncodeToString(sum[:]), nil
}
