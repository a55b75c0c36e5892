package resourceserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// TestDPoPNonceStreamTakenOver: the answer to a DPoP client's standalone
// stream (GET) of its handshake-era session carries the next nonce the
// Guard put in its header, with the gateway's streams taken over
// (Options.TakeOverStreams, as mcpadapter serve sets it) as on net/http's
// path. Each side is checked to have taken its path (the stream's
// connection closed at its end when taken over, kept alive otherwise).
func TestDPoPNonceStreamTakenOver(t *testing.T) {
	for _, take := range []bool{false, true} {
		e := setupWith(t, nil, func(_ *env, o *resourceserver.Options) { o.DPoPNonce = true }, &gateway.Options{TakeOverStreams: take})
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		d, err := oauthflow.NewDPoP(key)
		if err != nil {
			t.Fatal(err)
		}
		tok := e.token(t, map[string]any{"cnf": map[string]any{"jkt": d.Thumbprint()}})
		u, _ := url.Parse(e.url)
		ctx := ctxFor(t, 20*time.Second)
		nonce, session := "", ""
		send := func(method, body string) *http.Response {
			t.Helper()
			proof, err := d.Proof(method, u, tok, nonce)
			if err != nil {
				t.Fatal(err)
			}
			var rd io.Reader
			if body != "" {
				rd = strings.NewReader(body)
			}
			req, _ := http.NewRequestWithContext(ctx, method, e.url, rd)
			req.Header.Set("Authorization", "DPoP "+tok)
			req.Header.Set("DPoP", proof)
			req.Header.Set("Accept", "application/json, text/event-stream")
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if n := resp.Header.Get("DPoP-Nonce"); n != "" {
				nonce = n
			}
			return resp
		}
		const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		post := func(body string) *http.Response {
			t.Helper()
			resp := send(http.MethodPost, body)
			_, _ = io.Copy(io.Discard, resp.Body) // the answer whole
			resp.Body.Close()
			return resp
		}
		resp := post(initialize)
		if resp.StatusCode == http.StatusUnauthorized { // use_dpop_nonce
			resp = post(initialize)
		}
		if session = resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != http.StatusOK || session == "" {
			t.Fatalf("initialize: %s, session %q", resp.Status, session)
		}
		if resp = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %s", resp.Status)
		}
		resp = send(http.MethodGet, "")
		if resp.StatusCode == http.StatusUnauthorized { // use_dpop_nonce
			resp.Body.Close()
			resp = send(http.MethodGet, "")
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("TakeOverStreams %v: the stream: %s %q", take, resp.Status, b)
		}
		resp.Body.Close()
		if resp.Close != take {
			t.Fatalf("TakeOverStreams %v: Connection: close %v, the other path taken", take, resp.Close)
		}
		if resp.Header.Get("DPoP-Nonce") == "" {
			t.Errorf("TakeOverStreams %v: the stream's answer carries no DPoP-Nonce", take)
		}
	}
}
