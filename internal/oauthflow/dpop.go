package oauthflow

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// DPoP (RFC 9449) of one client: its key, the server nonces it was given
// (per origin), and the access tokens that came back bound to the key.
// Proofs are secrets: they go on the wire and nowhere else.
type DPoP struct {
	key crypto.Signer
	jwk map[string]any
	jkt string // the key's JWK thumbprint

	mu     sync.Mutex
	nonces map[string]string   // origin -> last DPoP-Nonce
	bound  map[[32]byte]uint64 // SHA-256 of access tokens issued as DPoP -> when recorded (seq)
	seq    uint64              // the number of MarkBound calls
	now    func() time.Time
}

// NewDPoP returns the DPoP state of a client that proves possession of key.
func NewDPoP(key crypto.Signer) (*DPoP, error) {
	jwk, err := PublicJWK(key)
	if err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	if _, err := Alg(key); err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	jkt, err := Thumbprint(jwk)
	if err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	return &DPoP{key: key, jwk: jwk, jkt: jkt, nonces: map[string]string{}, bound: map[[32]byte]uint64{}, now: time.Now}, nil
}

// Thumbprint returns the JWK SHA-256 thumbprint of the key (RFC 7638),
// what a token bound to the key names in its cnf.jkt.
func (d *DPoP) Thumbprint() string { return d.jkt }

// Proof returns a DPoP proof for a request of method to u, for the access
// token token ("" at the token endpoint), with nonce if not "".
func (d *DPoP) Proof(method string, u *url.URL, token, nonce string) (string, error) {
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment, htu.User = "", "", "", nil
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	claims := map[string]any{"jti": b64.EncodeToString(jti), "htm": method, "htu": htu.String(), "iat": d.now().Unix()}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		claims["ath"] = b64.EncodeToString(sum[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	return SignJWT(d.key, map[string]any{"typ": "dpop+jwt", "jwk": d.jwk}, claims)
}

func (d *DPoP) nonce(origin string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nonces[origin]
}

// remember keeps the DPoP-Nonce a response carries, if it is well formed.
func (d *DPoP) remember(origin string, resp *http.Response) string {
	n, ok := ParseDPoPNonce(resp.Header.Get("DPoP-Nonce"))
	if !ok {
		return ""
	}
	d.mu.Lock()
	d.nonces[origin] = n
	d.mu.Unlock()
	return n
}

// Bound reports whether the access token token was issued bound to the key.
func (d *DPoP) Bound(token string) bool {
	sum := sha256.Sum256([]byte(token))
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.bound[sum]
	return ok
}

// maxBound bounds the access tokens a DPoP records as bound: a token
// refreshed away is never used again, and a web service refreshes the
// tokens of all its users, for as long as it runs.
const maxBound = 1 << 14

// MarkBound records token as bound to the key (a token response said
// token_type DPoP), or records it again: past maxBound tokens, only
// those recorded last are kept (the older half is forgotten), so a caller
// that sends many tokens for long records each again when it sends it.
func (d *DPoP) MarkBound(token string) {
	sum := sha256.Sum256([]byte(token))
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	d.bound[sum] = d.seq
	if len(d.bound) <= maxBound {
		return
	}
	for k, at := range d.bound {
		if d.seq-at >= maxBound/2 {
			delete(d.bound, k)
		}
	}
}

// ParseDPoPNonce checks a DPoP-Nonce header value: one or more NQCHAR
// (RFC 9449 section 8.1), at most 1024 bytes.
func ParseDPoPNonce(v string) (string, bool) {
	if v == "" || len(v) > 1024 {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return v, true
}

// UseDPoPNonce reports whether a resource server's 401 asks for a DPoP
// nonce: a DPoP challenge with error="use_dpop_nonce".
func UseDPoPNonce(header []string) bool {
	cs, err := oauthex.ParseWWWAuthenticate(header)
	if err != nil {
		return false
	}
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "dpop") && c.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}

// TokenTransport returns a RoundTripper for requests to authorization
// servers: each form POST (a token request) gets a DPoP proof, is sent
// once more with the server's nonce when it answers use_dpop_nonce, and
// the access token of a DPoP token response is recorded as bound.
func (d *DPoP) TokenTransport(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPost || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			return next.RoundTrip(req)
		}
		origin := originOf(req.URL)
		resp, err := d.sendProved(next, req, "", d.nonce(origin))
		if err != nil {
			return nil, err
		}
		if n := d.remember(origin, resp); n != "" && resp.StatusCode == http.StatusBadRequest && tokenErrorCode(resp) == "use_dpop_nonce" {
			resp.Body.Close()
			if resp, err = d.sendProved(next, req, "", n); err != nil {
				return nil, err
			}
			d.remember(origin, resp)
		}
		d.noteTokenResponse(resp)
		return resp, nil
	})
}

// ResourceTransport returns a RoundTripper for requests to the protected
// resource: a request whose Authorization is "Bearer T" for a bound T is
// sent as "DPoP T" with a proof, and once more with the server's nonce
// when it answers 401 use_dpop_nonce.
func (d *DPoP) ResourceTransport(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if !ok || !d.Bound(tok) {
			return next.RoundTrip(req)
		}
		origin := originOf(req.URL)
		resp, err := d.sendProved(next, req, tok, d.nonce(origin))
		if err != nil {
			return nil, err
		}
		n := d.remember(origin, resp)
		if n == "" || resp.StatusCode != http.StatusUnauthorized || !UseDPoPNonce(resp.Header.Values("WWW-Authenticate")) {
			return resp, nil
		}
		if req.Body != nil && req.GetBody == nil {
			return resp, nil // cannot send it again
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp, err = d.sendProved(next, req, tok, n)
		if err == nil {
			d.remember(origin, resp)
		}
		return resp, err
	})
}

// sendProved sends a copy of req with a fresh proof (and, for token, the
// DPoP authorization scheme).
func (d *DPoP) sendProved(next http.RoundTripper, req *http.Request, token, nonce string) (*http.Response, error) {
	proof, err := d.Proof(req.Method, req.URL, token, nonce)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	if req.GetBody != nil {
		if out.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	out.Header.Set("DPoP", proof)
	if token != "" {
		out.Header.Set("Authorization", "DPoP "+token)
	}
	return next.RoundTrip(out)
}

// noteTokenResponse records the access token of a successful token
// response whose token_type is DPoP; the body is left readable.
func (d *DPoP) noteTokenResponse(resp *http.Response) {
	if resp.StatusCode != http.StatusOK {
		return
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if json.Unmarshal(body, &tr) == nil && tr.AccessToken != "" && strings.EqualFold(tr.TokenType, "DPoP") {
		d.MarkBound(tr.AccessToken)
	}
}

// tokenErrorCode is the "error" member of an OAuth error response; the
// body is left readable.
func tokenErrorCode(resp *http.Response) string {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// originOf is scheme://host[:port] of u, in lower case.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}
