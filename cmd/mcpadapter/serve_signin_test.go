package main

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type setHeader struct{ k, v string }

func (h setHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeSignIn: serve with a server whose auth is "signin" serves the
// sign-in pages beside /mcp, outside the resource server: alice's first
// call gets -32042 with the gateway's start page, her browser signs in
// (at the gateway's --issuer, then at the server's), and her next call
// reaches the server as alice. The secrets, read from the environment,
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
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL, HTTPClient: &http.Client{Transport: setHeader{"Authorization", "Bearer " + tok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	echo := func() (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "as alice"}})
	}
	_, err = echo()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("want -32042, got %v", err)
	}
	var d struct {
		Elicitations []mcp.ElicitParams `json:"elicitations"`
	}
	if err := json.Unmarshal(we.Data, &d); err != nil || len(d.Elicitations) != 1 || !strings.HasPrefix(d.Elicitations[0].URL, "http://"+addr+"/oauth/start?") {
		t.Fatalf("data %s: %v", we.Data, err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Transport: setHeader{testauth.UserHeader, "alice"}}
	resp, err := browser.Get(d.Elicitations[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the sign-in ended with %d %q", resp.StatusCode, body)
	}
	res, err := echo()
	if err != nil || res.IsError {
		t.Fatalf("alice's call after signing in: %v %+v", err, res)
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
