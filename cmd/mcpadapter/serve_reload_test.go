package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/policy"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeReload: `serve --watch-config` takes a changed config while a
// client stays connected (a new server's tools appear), refuses a broken
// one with its problem and keeps serving, and reloads on SIGHUP (a
// removed server's tools go).
func TestServeReload(t *testing.T) {
	alpha := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	beta := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "beta", Era: testserver.Legacy}))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	write := func(doc string) {
		t.Helper()
		// Write beside and rename, as editors do: the watcher never
		// reads half a file.
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, alpha.URL))
	p := startServe(t, dir, nil, "--config", cfg, "--listen", "127.0.0.1:0", "--prefix", "always", "--watch-config")
	url := p.URL
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools := func() []string {
		t.Helper()
		return listedTools(t, ctx, cs)
	}
	if names := tools(); !slices.Contains(names, "alpha_echo") || slices.Contains(names, "beta_echo") {
		t.Fatalf("tools at the start: %v", names)
	}

	write(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}, "beta": {"url": %q}}}`, alpha.URL, beta.URL))
	p.next("reloaded")
	if names := tools(); !slices.Contains(names, "alpha_echo") || !slices.Contains(names, "beta_echo") {
		t.Fatalf("tools after adding beta: %v", names)
	}

	write(`{"mcpServers": {"alpha": {"url": 42}}}`)
	p.next("refused")
	if l := p.next("url"); !strings.Contains(l, "alpha") {
		t.Errorf("the refusal does not name the entry: %q", l)
	}
	if names := tools(); !slices.Contains(names, "beta_echo") {
		t.Fatalf("tools after a refused config: %v", names)
	}

	// SIGHUP reloads, whatever the watch saw.
	write(fmt.Sprintf(`{"mcpServers": {"beta": {"url": %q}}}`, beta.URL))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.next("(SIGHUP)")
	deadline := time.Now().Add(20 * time.Second)
	for names := tools(); slices.Contains(names, "alpha_echo") || !slices.Contains(names, "beta_echo"); names = tools() {
		if time.Now().After(deadline) {
			t.Fatalf("tools after removing alpha: %v", names)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta_echo", Arguments: map[string]any{"text": "still here"}}); err != nil || len(res.Content) == 0 {
		t.Fatalf("a call after the reloads: %v", err)
	}
}

// TestServeReloadPolicy: SIGHUP reads the --policy file again with the
// config: a client still connected sees what the new policy gives it; a
// policy that cannot be read is refused, naming the file and the
// problem, and the policy in force stays.
func TestServeReloadPolicy(t *testing.T) {
	const key = "k-alice-0123456789abcdef"
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "policy.json")
	writePolicy := func(doc string) {
		t.Helper()
		if err := os.WriteFile(pol+".tmp", []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(pol+".tmp", pol); err != nil {
			t.Fatal(err)
		}
	}
	writePolicy(`{"rules":[{"principals":["alice"],"allow":["alpha/echo"]}]}`)
	p := startServe(t, dir, []string{"KEY_ALICE=" + key}, "--config", cfg, "--listen", "127.0.0.1:0", "--api-key", "alice=KEY_ALICE", "--policy", pol)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL, HTTPClient: &http.Client{Transport: bearerRT{key}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools := func() []string {
		t.Helper()
		return listedTools(t, ctx, cs)
	}
	if names := tools(); !slices.Contains(names, "echo") || slices.Contains(names, "add") {
		t.Fatalf("tools under the first policy: %v", names)
	}
	writePolicy(`{"rules":[{"principals":["alice"],"allow":["alpha/add"]}]}`)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.next("reloaded")
	if names := tools(); slices.Contains(names, "echo") || !slices.Contains(names, "add") {
		t.Fatalf("tools under the reloaded policy: %v", names)
	}
	writePolicy(`{"rules":[{"principals":["alice"],"allow":42}]}`)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.next("refused")
	if l := p.next("policy"); !strings.Contains(l, pol) {
		t.Errorf("the refusal does not name the policy file: %q", l)
	}
	if names := tools(); slices.Contains(names, "echo") || !slices.Contains(names, "add") {
		t.Errorf("tools after a refused policy: %v", names)
	}
}

// listedTools returns the names of the tools cs lists.
func listedTools(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestReloadPolicyWhileServersChange: while a reload adds a server, what
// is allowed is what both the old and the new policy allow, so a server the
// new policy refuses is never callable under the old one; then the new
// policy is in force.
func TestReloadPolicyWhileServersChange(t *testing.T) {
	alpha := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	beta := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "beta"}), testserver.Stateless())
	dir := t.TempDir()
	t.Setenv("HOME", dir) // the config is the user's own: no trust question
	cfg := filepath.Join(dir, "mcp.json")
	pol := filepath.Join(dir, "policy.json")
	write := func(path, doc string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg, fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, alpha.URL))
	old, err := policy.Parse([]byte(`{"rules":[{"principals":["alice"],"allow":["alpha/echo","beta/echo"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := cmdline.New(nil, io.Discard, io.Discard, "mcpadapter")
	start, err := a.ReloadConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var gw *gateway.Gateway
	betaUp := make(chan bool, 1)
	gw, err = gateway.New(gateway.FromConfig(start), &gateway.Options{Policy: old, OnEvent: func(e gateway.Event) {
		if e.Kind == gateway.ServerUp && e.Server == "beta" {
			select {
			case betaUp <- gw.Policy().Allow(ctx, "alice", "beta", "tool", "echo"):
			default:
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer gw.Close()

	write(cfg, fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}, "beta": {"url": %q}}}`, alpha.URL, beta.URL))
	write(pol, `{"rules":[{"principals":["alice"],"allow":["alpha/echo"]}]}`)
	if err := reload(ctx, a, gw, reloadFiles{config: cfg, policy: pol}); err != nil {
		t.Fatal(err)
	}
	select {
	case allowed := <-betaUp:
		if allowed {
			t.Error("beta/echo was allowed while beta came up, though the new policy refuses it")
		}
	case <-ctx.Done():
		t.Fatal("beta never came up")
	}
	p := gw.Policy()
	if p.Allow(ctx, "alice", "beta", "tool", "echo") || !p.Allow(ctx, "alice", "alpha", "tool", "echo") {
		t.Error("after the reload the new policy is not the one in force")
	}

	// A config the gateway refuses leaves the policy as it was.
	write(cfg, `{"mcpServers": {"alpha": {"url": "https://[::1"}}}`)
	write(pol, `{"rules":[{"principals":["alice"],"allow":["alpha/add"]}]}`)
	if err := reload(ctx, a, gw, reloadFiles{config: cfg, policy: pol}); err == nil {
		t.Fatal("a config with a bad URL was taken")
	}
	if p := gw.Policy(); !p.Allow(ctx, "alice", "alpha", "tool", "echo") || p.Allow(ctx, "alice", "alpha", "tool", "add") {
		t.Error("a refused reload changed the policy")
	}
}

// TestReloadPolicyWhenReloadEnds: a reload whose context ends while a
// server it added is still coming up has taken the new servers, and the
// new policy is the one in force (not the old one, which allows the new
// server's tools).
func TestReloadPolicyWhenReloadEnds(t *testing.T) {
	alpha := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers while the test runs
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	dir := t.TempDir()
	t.Setenv("HOME", dir) // the config is the user's own: no trust question
	cfg := filepath.Join(dir, "mcp.json")
	pol := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, alpha.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	old, err := policy.Parse([]byte(`{"rules":[{"principals":["alice"],"allow":["alpha/echo","slow/echo"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := cmdline.New(nil, io.Discard, io.Discard, "mcpadapter")
	start, err := a.ReloadConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.FromConfig(start), &gateway.Options{Policy: old})
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer gw.Close()

	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}, "slow": {"url": %q}}}`, alpha.URL, slow.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte(`{"rules":[{"principals":["alice"],"allow":["alpha/echo"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	if err := reload(short, a, gw, reloadFiles{config: cfg, policy: pol}); err == nil {
		t.Fatal("the reload returned before slow came up")
	}
	if !slices.ContainsFunc(gw.Servers(), func(s gateway.ServerStatus) bool { return s.Name == "slow" }) {
		t.Fatal("the reload did not take the new servers")
	}
	p := gw.Policy()
	if p.Allow(ctx, "alice", "slow", "tool", "echo") || !p.Allow(ctx, "alice", "alpha", "tool", "echo") {
		t.Error("the reload took the new servers, and the policy in force is not the new one")
	}
}
