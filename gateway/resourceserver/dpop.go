package resourceserver

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

var b64 = base64.RawURLEncoding

// dpopChecker checks DPoP proofs (RFC 9449 section 4.3) and remembers the
// ones it accepted, in its ReplayStore, until they are too old to be
// accepted again.
type dpopChecker struct {
	algs   []jose.SignatureAlgorithm
	maxAge time.Duration
	leeway time.Duration
	nonces []byte // the nonce key; nil: no nonces

	seen         ReplayStore
	perPrincipal int
	timeout      time.Duration // bounds one call of seen
}

func newDPoPChecker(algs []jose.SignatureAlgorithm, maxAge, leeway time.Duration, seen ReplayStore, perPrincipal int, timeout time.Duration, nonceKey []byte) *dpopChecker {
	return &dpopChecker{algs: algs, maxAge: maxAge, leeway: leeway, nonces: nonceKey, seen: seen, perPrincipal: perPrincipal, timeout: timeout}
}

type proofClaims struct {
	JTI   string  `json:"jti"`
	HTM   string  `json:"htm"`
	HTU   string  `json:"htu"`
	IAT   float64 `json:"iat"`
	ATH   string  `json:"ath"`
	Nonce string  `json:"nonce"`
}

func badProof(reason string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_dpop_proof", DPoP: true, Reason: "DPoP proof: " + reason}
}

// check checks the proof of a request of principal that presents tok,
// bound to the key whose thumbprint is jkt, for the gateway at resource.
func (d *dpopChecker) check(r *http.Request, resource, principal, tok, jkt string, now time.Time) error {
	hs := r.Header.Values("DPoP")
	switch {
	case len(hs) == 0:
		return badProof("missing")
	case len(hs) > 1:
		return badProof("more than one DPoP header")
	case len(hs[0]) > 8<<10:
		return badProof("over 8 KiB")
	}
	p, err := jwt.ParseSigned(hs[0], d.algs)
	if err != nil {
		return badProof("not a JWS of an accepted algorithm")
	}
	if len(p.Headers) != 1 {
		return badProof("not one signature")
	}
	h := p.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return badProof("typ is not dpop+jwt")
	}
	k := h.JSONWebKey
	if k == nil || !k.Valid() || !k.IsPublic() || !keyFits(k, h.Algorithm) {
		return badProof("no public key of the proof's algorithm in its jwk header")
	}
	var c proofClaims
	if err := p.Claims(k.Key, &c); err != nil {
		return badProof("the signature does not match its jwk")
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil || b64.EncodeToString(tp) != jkt {
		return badProof("signed by another key than the token is bound to")
	}
	if c.HTM != r.Method {
		return badProof("htm is not the request's method")
	}
	if normalizeHTU(c.HTU) != normalizeHTU(requestURL(resource, r)) {
		return badProof("htu is not the request's URL")
	}
	iat := time.Unix(int64(c.IAT), 0)
	if c.IAT == 0 || iat.After(now.Add(d.leeway)) || iat.Before(now.Add(-d.maxAge)) {
		return badProof("iat is outside the accepted window")
	}
	sum := sha256.Sum256([]byte(tok))
	if !hmac.Equal([]byte(c.ATH), []byte(b64.EncodeToString(sum[:]))) {
		return badProof("ath is not the hash of the access token")
	}
	if d.nonces != nil && !d.validNonce(c.Nonce, now) {
		return &Error{Status: http.StatusUnauthorized, Code: "use_dpop_nonce", DPoP: true, Reason: "DPoP proof without a current nonce"}
	}
	if c.JTI == "" || len(c.JTI) > 256 {
		return badProof("no jti, or one over 256 bytes")
	}
	return d.remember(r.Context(), principal, jkt+" "+c.JTI, iat.Add(d.maxAge+d.leeway).Sub(now))
}

// remember records a proof's id for ttl in the bucket of its principal,
// refusing one seen before. A principal whose bucket is full of live
// proofs gets 429 until some are too old: one client sending proofs
// faster than the bound allows is held back, and no one else. A store
// that fails refuses the proof with 503 rather than let a replay through.
func (d *dpopChecker) remember(ctx context.Context, principal, id string, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	fresh, full, err := d.seen.Once(ctx, "dpop "+principal, id, ttl, d.perPrincipal)
	switch {
	case err != nil:
		return &Error{Status: http.StatusServiceUnavailable, Reason: "the DPoP replay store failed: " + err.Error(), err: err}
	case full:
		return &Error{Status: http.StatusTooManyRequests, Reason: fmt.Sprintf("too many live DPoP proofs of this principal (at most %d within %s are remembered, fewer when the in-memory store is full)", d.perPrincipal, d.maxAge+d.leeway), retry: time.Second}
	case !fresh:
		return badProof("replayed (its jti was seen before)")
	}
	return nil
}

// requestURL is the URL a client reached: the resource's origin and the
// request's path.
func requestURL(resource string, r *http.Request) string {
	u, _ := url.Parse(resource)
	return u.Scheme + "://" + u.Host + r.URL.EscapedPath()
}

// normalizeHTU is an htu without query and fragment, with scheme and host
// in lower case and the default port left out (RFC 9449 section 4.3,
// RFC 3986 sections 6.2.2 and 6.2.3).
func normalizeHTU(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "\x00invalid"
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	host = strings.TrimSuffix(host, map[string]string{"http": ":80", "https": ":443"}[scheme])
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path
}

// nonceLife is how long one nonce lasts; a nonce is accepted during its
// own period and the next.
const nonceLife = DefaultDPoPNonceTTL / 2

// nonce returns the current server nonce: the period's number and its
// HMAC, so any replica with the same key accepts it.
func (d *dpopChecker) nonce(now time.Time) string {
	return d.nonceFor(uint64(now.Unix() / int64(nonceLife/time.Second)))
}

func (d *dpopChecker) nonceFor(period uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], period)
	m := hmac.New(sha256.New, d.nonces)
	m.Write(b[:])
	return b64.EncodeToString(append(b[:], m.Sum(nil)[:16]...))
}

func (d *dpopChecker) validNonce(n string, now time.Time) bool {
	cur := uint64(now.Unix() / int64(nonceLife/time.Second))
	return n != "" && (hmac.Equal([]byte(n), []byte(d.nonceFor(cur))) || hmac.Equal([]byte(n), []byte(d.nonceFor(cur-1))))
}
