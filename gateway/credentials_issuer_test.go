package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExchangeIssuerGarbage: an issuer whose token endpoint answers a
// token exchange with a redirect elsewhere, text that is not JSON, a
// token response with no token, a token of 900 KiB, or a token no header
// can carry gets the principal a CodeUpstreamAuth error: the redirect's
// target gets nothing, the server gets no request for the principal, and
// no token or secret is in the error or the logs.
func TestExchangeIssuerGarbage(t *testing.T) {
	var evilHits lockedBuffer
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(&evilHits, "%s %s %q %s\n", r.Method, r.URL.Path, r.Header.Get("Authorization"), body)
	}))
	t.Cleanup(evil.Close)
	answers := map[string]http.HandlerFunc{
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, evil.URL+"/token", http.StatusTemporaryRedirect)
		},
		"text": func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>hello</html>") },
		"empty": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"token_type":"Bearer","expires_in":3600}`)
		},
		"huge": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"token_type":"Bearer","access_token":"`+strings.Repeat("a", 900<<10)+`"}`)
		},
		"crlf": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"token_type":"Bearer","access_token":"x\r\nX-Injected: 1"}`)
		},
	}
	var servers []gateway.Server
	e := startXchg(t, nil, func(e *xchgEnv) []gateway.Server {
		for name, answer := range answers {
			iss := startScriptedIssuer(t, e.as.URL+"/token", answer)
			servers = append(servers, gateway.Server{Name: name, Target: e.as.MCPURL,
				Exchange: &mcpadapter.TokenExchange{Issuer: iss, ClientID: xchgClient, ClientSecret: xchgSecret,
					Resource: e.as.MCPURL, Scopes: []string{testauth.BaseScope}}})
		}
		return servers
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.token(t, "alice")
	cs := e.sdkClient(t, ctx, alice)
	for name := range answers {
		seen := len(e.as.Requests())
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_whoami", Arguments: map[string]any{}})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != gateway.CodeUpstreamAuth {
			t.Errorf("%s: %v, want a JSON-RPC error %d", name, err, gateway.CodeUpstreamAuth)
			continue
		}
		if len(rpc.Message) > 2000 || strings.Contains(rpc.Message, alice) || strings.Contains(rpc.Message, xchgSecret) {
			t.Errorf("%s: the error quotes a token or the secret, or is %d bytes", name, len(rpc.Message))
		}
		for _, r := range e.as.Requests()[seen:] {
			if r.User == "alice" || strings.Contains(r.Authorization, "X-Injected") {
				t.Errorf("%s: the server got a request for alice: %q", name, r.Authorization)
			}
		}
	}
	if h := evilHits.String(); h != "" {
		t.Errorf("the redirect's target was sent:\n%s", h)
	}
	if strings.Contains(e.logs.String(), alice) || strings.Contains(e.logs.String(), xchgSecret) {
		t.Error("a token or the secret is in the logs")
	}
}

// startScriptedIssuer starts an authorization server whose token endpoint
// answers a token exchange with answer, and hands the client credentials
// grant on to forward (the gateway's own token, for its listings). It
// returns its issuer URL.
func startScriptedIssuer(t *testing.T, forward string, answer http.HandlerFunc) string {
	t.Helper()
	var url string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": url, "token_endpoint": url + "/token"})
			return
		}
		if r.PostFormValue("grant_type") != "client_credentials" {
			answer(w, r)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, forward, strings.NewReader(r.PostForm.Encode()))
		req.Header = r.Header.Clone()
		req.Header.Del("Content-Length")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	url = srv.URL
	t.Cleanup(srv.Close)
	return url
}
