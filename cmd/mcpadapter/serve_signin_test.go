package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type setHeader struct{ k, v string }

func (h setHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeSignIn: serve with a server whose auth is "signin" serves the
// sign-in pages beside /mcp, outside the resource server: alice's call
// asks her mid-call with the gateway's start page, her browser signs in
// (at the gateway's --issuer, then at the server's), and the call goes
// on and reaches the server as alice. The secrets, read from the environment,
// are printed nowhere.
func TestServeSignIn(t *testing.T) {
	const upSecret, loginSecret = "up-secret-0123456789", "login-secret-0123456789"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	resource := "http://" + addr + "/mcp"
	gwAS := testauth.Start(t, testauth.Options{JWT: true, UserSubject: true, ClientID: "login", ClientSecret: loginSecret, NoRegistration: true, Resource: resource})
	upAS := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "gw", ClientSecret: upSecret, NoRegistration: true})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	doc := fmt.Sprintf(`{"mcpServers": {"up": {"url": %q, "auth": {"type": "signin", "issuer": %q,
		"clientId": "gw", "clientSecret": "${UP_SECRET}", "scopes": [%q]}}}}`, upAS.MCPURL, upAS.URL, testauth.BaseScope)
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, []string{"UP_SECRET=" + upSecret, "LOGIN_SECRET=" + loginSecret, "SIGNIN_KEY=" + strings.Repeat("k", 40)},
		"--config", cfg, "--listen", addr, "--resource", resource, "--issuer", gwAS.URL, "--scope", testauth.BaseScope,
		"--signin-key-env", "SIGNIN_KEY", "--signin-login-client-id", "login", "--signin-login-secret-env", "LOGIN_SECRET")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tok, err := gwAS.SignToken(map[string]any{"sub": "alice", "aud": resource, "scope": testauth.BaseScope})
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Transport: setHeader{testauth.UserHeader, "alice"}}
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.URL)
			if req.Params.Mode != "url" || !strings.HasPrefix(req.Params.URL, "http://"+addr+"/oauth/start?") {
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			resp, err := browser.Get(req.Params.URL)
			if err != nil {
				return nil, err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("the sign-in ended with %d %q", resp.StatusCode, body)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL, HTTPClient: &http.Client{Transport: setHeader{"Authorization", "Bearer " + tok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "as alice"}})
	if err != nil || res.IsError || len(asked) != 1 {
		t.Fatalf("alice's call, asked to sign in mid-call (%d times): %v %+v", len(asked), err, res)
	}
	alice := 0
	for _, r := range upAS.Requests() {
		if r.User == "alice" {
			alice++
		}
	}
	if alice == 0 {
		t.Error("no request reached the server as alice")
	}
	if out := p.stdout.String() + p.stderr.String(); strings.Contains(out, upSecret) || strings.Contains(out, loginSecret) || !strings.Contains(out, "sign-in pages at") {
		t.Errorf("serve printed a secret, or not where its sign-in pages are: %s", out)
	}
}
