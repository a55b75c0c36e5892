package resourceserver_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
)

// recorder keeps the headers of the requests a client sent to the
// resource with a DPoP-bound token that were answered 200.
type recorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	ok     []http.Header
	nonces int // 200 answers with a DPoP-Nonce
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusOK && strings.HasPrefix(req.Header.Get("Authorization"), "DPoP ") {
		r.mu.Lock()
		r.ok = append(r.ok, req.Header.Clone())
		if resp.Header.Get("DPoP-Nonce") != "" {
			r.nonces++
		}
		r.mu.Unlock()
	}
	return resp, err
}

// TestDPoPAdapterClient: the adapter's own client, with a DPoP key and the
// client credentials grant, gets a DPoP-bound JWT from the authorization
// server the gateway names, and calls a tool through the gateway, which
// demands a nonce first (use_dpop_nonce). A proof the client sent, replayed
// with its token by someone who saw them, is refused, and the call does
// not reach the server.
func TestDPoPAdapterClient(t *testing.T) {
	t.Run("jwt", func(t *testing.T) {
		adapterDPoP(t, setup(t, nil, func(_ *env, o *resourceserver.Options) { o.DPoPNonce = true }))
	})
	t.Run("introspection", func(t *testing.T) {
		adapterDPoP(t, setup(t, func(o *testauth.Options) { o.JWT = false }, func(e *env, o *resourceserver.Options) {
			introspecting(time.Minute)(e, o)
			o.DPoPNonce = true
		}))
	})
}

func adapterDPoP(t *testing.T, e *env) {
	key, err := mcpadapter.NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{next: http.DefaultTransport}
	c, err := mcpadapter.NewClient(e.url, &mcpadapter.ClientOptions{
		HTTPClient: &http.Client{Transport: rec},
		Auth:       &mcpadapter.ClientCredentials{Issuer: e.as.URL, ClientID: clientID, ClientSecret: clientSecret, DPoPKey: key},
		Logger:     quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := ctxFor(t, 30*time.Second)
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatalf("tools through the gateway: %v", err)
	}
	var echo *mcpadapter.Tool
	for _, tl := range tools {
		if tl.Name == "echo" {
			echo = tl
		}
	}
	if echo == nil {
		t.Fatalf("no echo tool among %d", len(tools))
	}
	before := e.upstream.Load()
	res, err := echo.Call(ctx, json.RawMessage(`{"text":"bound"}`))
	if err != nil || !strings.Contains(res.Text(), "bound") {
		t.Fatalf("call: %v %v", res, err)
	}
	if e.upstream.Load() == before {
		t.Fatal("the call did not reach the server")
	}
	if !strings.Contains(e.logs.String(), "error=use_dpop_nonce") {
		t.Error("the gateway never asked for a nonce")
	}
	if n := e.as.Counts().DPoPTokens; n != 1 {
		t.Errorf("%d DPoP-bound tokens issued, want 1", n)
	}
	rec.mu.Lock()
	sent, nonces := rec.ok, rec.nonces
	rec.mu.Unlock()
	if nonces != len(sent) {
		t.Errorf("%d of %d answers to DPoP requests carried the next nonce", nonces, len(sent))
	}
	if len(sent) == 0 {
		t.Fatal("no request with a DPoP proof was answered 200")
	}
	last := sent[len(sent)-1]
	if !strings.HasPrefix(last.Get("Authorization"), "DPoP ") {
		t.Errorf("the bound token went as %q", strings.SplitN(last.Get("Authorization"), " ", 2)[0])
	}
	before = e.upstream.Load()
	resp := e.post(t, map[string]string{"Authorization": last.Get("Authorization"), "DPoP": last.Get("DPoP")})
	e.mustRefuseDPoP(t, "a replayed proof", resp, "invalid_dpop_proof", before)
	if !strings.Contains(e.logs.String(), "replayed") {
		t.Errorf("the log does not say the proof was replayed")
	}
	if strings.Contains(e.logs.String(), last.Get("DPoP")) {
		t.Error("the log holds a proof")
	}
}

// TestDPoPProofAttacks: a DPoP-bound token with a proof that is missing,
// another key's, for another method or URL, for another token, stale,
// from the future, or not a proof at all; or the bound token sent as a
// bearer token: each refused with 401 and a DPoP challenge, nothing
// reaching the server. A fresh proof passes.
func TestDPoPProofAttacks(t *testing.T) {
	e := setup(t, nil, nil)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, err := oauthflow.NewDPoP(key)
	if err != nil {
		t.Fatal(err)
	}
	tok := e.token(t, map[string]any{"cnf": map[string]any{"jkt": d.Thumbprint()}})
	u, _ := url.Parse(e.url)
	proof := func(d *oauthflow.DPoP, method string, u *url.URL, tok string) string {
		p, err := d.Proof(method, u, tok, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	dpop := func(p string) map[string]string { return map[string]string{"Authorization": "DPoP " + tok, "DPoP": p} }
	start := e.upstream.Load()
	e.mustPass(t, "a fresh proof", e.post(t, dpop(proof(d, "POST", u, tok))), start)

	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := oauthflow.NewDPoP(otherKey)
	elsewhere, _ := url.Parse(strings.Replace(e.url, "/mcp", "/other", 1))
	jwk, _ := oauthflow.PublicJWK(key)
	ath := func(s string) string { h := sha256.Sum256([]byte(s)); return b64(h[:]) }
	handmade := func(header, claims map[string]any) string {
		h := map[string]any{"typ": "dpop+jwt", "jwk": jwk}
		for k, v := range header {
			h[k] = v
		}
		c := map[string]any{"jti": rand.Text(), "htm": "POST", "htu": e.url, "iat": time.Now().Unix(), "ath": ath(tok)}
		for k, v := range claims {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return sign(t, key, h, c)
	}
	attacks := map[string]map[string]string{
		"no proof":           {"Authorization": "DPoP " + tok},
		"as a bearer token":  {"Authorization": "Bearer " + tok, "DPoP": proof(d, "POST", u, tok)},
		"another key":        dpop(proof(other, "POST", u, tok)),
		"another method":     dpop(proof(d, "GET", u, tok)),
		"another URL":        dpop(proof(d, "POST", elsewhere, tok)),
		"another token":      dpop(proof(d, "POST", u, e.token(t, nil))),
		"no ath":             dpop(proof(d, "POST", u, "")),
		"stale":              dpop(handmade(nil, map[string]any{"iat": time.Now().Add(-10 * time.Minute).Unix()})),
		"from the future":    dpop(handmade(nil, map[string]any{"iat": time.Now().Add(10 * time.Minute).Unix()})),
		"no jti":             dpop(handmade(nil, map[string]any{"jti": nil})),
		"typ JWT":            dpop(handmade(map[string]any{"typ": "JWT"}, nil)),
		"no jwk":             dpop(handmade(map[string]any{"jwk": nil}, nil)),
		"jwk of another key": dpop(handmade(map[string]any{"jwk": mustJWK(t, otherKey)}, nil)),
		"garbage":            dpop("a.b.c"),
		"two proofs":         nil, // below
	}
	before := e.upstream.Load()
	for name, h := range attacks {
		if h == nil {
			continue
		}
		e.mustRefuseDPoP(t, name, e.post(t, h), "", before)
	}
	// Two DPoP headers.
	req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(callBody))
	req.Header.Set("Authorization", "DPoP "+tok)
	req.Header.Add("DPoP", proof(d, "POST", u, tok))
	req.Header.Add("DPoP", proof(d, "POST", u, tok))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	e.mustRefuseDPoP(t, "two proofs", resp, "invalid_dpop_proof", before)

	// An unbound token with the DPoP scheme.
	plain := e.token(t, nil)
	e.mustRefuseDPoP(t, "an unbound token as DPoP", e.post(t, map[string]string{"Authorization": "DPoP " + plain, "DPoP": proof(d, "POST", u, plain)}), "invalid_token", before)
	e.mustPass(t, "another fresh proof", e.post(t, dpop(proof(d, "POST", u, tok))), before)
}

func mustJWK(t testing.TB, key *ecdsa.PrivateKey) map[string]any {
	j, err := oauthflow.PublicJWK(key)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// mustRefuseDPoP checks a 401 with a DPoP challenge (with code, if set)
// and that nothing reached the server.
func (e *env) mustRefuseDPoP(t testing.TB, what string, resp *http.Response, code string, before int64) {
	t.Helper()
	if resp.StatusCode != http.StatusUnauthorized {
		body, _ := io.ReadAll(resp.Body)
		t.Errorf("%s: status %d (%s), want 401", what, resp.StatusCode, bytes.TrimSpace(body))
	}
	var dpop string
	for _, c := range resp.Header.Values("WWW-Authenticate") {
		if strings.HasPrefix(c, "DPoP ") {
			dpop = c
		}
	}
	if dpop == "" || !strings.Contains(dpop, `resource_metadata="`+e.guard.MetadataURL()+`"`) || !strings.Contains(dpop, "algs=") {
		t.Errorf("%s: no DPoP challenge with the metadata and algs: %q", what, resp.Header.Values("WWW-Authenticate"))
	}
	if code != "" && !strings.Contains(dpop, `error="`+code+`"`) {
		t.Errorf("%s: DPoP challenge %q, want error=%q", what, dpop, code)
	}
	if n := e.upstream.Load(); n != before {
		t.Errorf("%s: %d calls reached the server", what, n-before)
	}
}
