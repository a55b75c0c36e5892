package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// toolByName returns the tool named name from tools, or fails.
func toolByName(t *testing.T, tools []*mcpadapter.Tool, name string) *mcpadapter.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// whoamiOf decodes the whoami tool's answer.
func whoamiOf(res *mcpadapter.Result) (testserver.Whoami, error) {
	var w testserver.Whoami
	if res.IsError || res.Artifact == nil {
		return w, fmt.Errorf("not a whoami answer: %q", res.Text())
	}
	return w, res.Artifact.Decode(&w)
}

// TestCallIdentityTwoPrincipals interleaves 10,000 calls of two principals
// on one client of a caching 2026-07-28 HTTP server whose whoami tool and
// whoami resource say who called: every answer names its own principal,
// and no private cache entry reaches the other principal (or a request
// with no principal).
func TestCallIdentityTwoPrincipals(t *testing.T) {
	srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 600000, CacheScope: "private", WhoamiResource: true})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	var tokens sync.Map // principal -> times its token was asked for
	auth := mcpadapter.PrincipalToken(func(_ context.Context, p string) (string, error) {
		n, _ := tokens.LoadOrStore(p, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		return "token-of-" + p, nil
	})
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Auth: auth, Cache: &mcpadapter.CacheConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// Bounded, but generous: the machine running the tests may be busy
	// (the race detector slows each call tenfold).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	whoami := toolByName(t, tools, "whoami")

	principals := []string{"alice", "bob"}
	ids := make([]*mcpadapter.CallIdentity, len(principals))
	for i, p := range principals {
		ids[i] = &mcpadapter.CallIdentity{Principal: p, Headers: map[string]string{testserver.PrincipalHeader: p}, Meta: map[string]any{"tenant": "t-" + p}}
	}
	// 10,000 calls; 1,000 under the race detector, which makes each
	// call ten times slower (the scale is the only difference).
	calls := 10000
	if raceDetector {
		calls = 1000
	}
	const workers, readEvery = 8, 7
	var wrong, crossHits, reads atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(calls) {
					return
				}
				id := ids[i%2]
				cctx := mcpadapter.WithCallIdentity(ctx, id)
				res, err := whoami.CallWith(cctx, nil, &mcpadapter.CallOptions{Meta: map[string]any{"call": float64(i)}})
				if err != nil {
					errs <- fmt.Errorf("call %d: %w", i, err)
					return
				}
				w, err := whoamiOf(res)
				if err != nil || w.Principal != id.Principal || w.Meta["tenant"] != "t-"+id.Principal || w.Meta["call"] != float64(i) {
					wrong.Add(1)
				}
				if i%readEvery != 0 {
					continue
				}
				rr, err := c.ReadResource(cctx, testserver.ResourceWhoami)
				if err != nil {
					errs <- fmt.Errorf("read %d: %w", i, err)
					return
				}
				reads.Add(1)
				if got := rr.Contents[0].Text; !strings.HasPrefix(got, "whoami "+id.Principal+" read ") {
					crossHits.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A request with no principal has its own private entries.
	rr, err := c.ReadResource(ctx, testserver.ResourceWhoami)
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.Contents[0].Text; !strings.HasPrefix(got, "whoami  read ") {
		crossHits.Add(1)
		t.Errorf("a read with no principal got %q", got)
	}
	served := st.Reads(testserver.ResourceWhoami)
	hits := reads.Load() + 1 - int64(served)
	t.Logf("%d calls, %d reads (%d from the cache, %d from the server): %d wrong answers, %d cross-principal cache hits",
		calls, reads.Load()+1, hits, served, wrong.Load(), crossHits.Load())
	if wrong.Load() != 0 || crossHits.Load() != 0 {
		t.Fatalf("%d wrong answers, %d cross-principal cache hits; want 0", wrong.Load(), crossHits.Load())
	}
	if hits <= 0 {
		t.Fatalf("no read was served from the cache (%d reads, %d by the server): the test proves nothing", reads.Load()+1, served)
	}
	for _, p := range principals {
		if n, ok := tokens.Load(p); !ok || n.(*atomic.Int64).Load() < int64(calls/2) {
			t.Errorf("PrincipalToken was asked for %q's token %v times; want at least %d", p, n, calls/2)
		}
	}
}

// TestPrincipalTokenPerRequest checks that each principal's request
// carries its own bearer token, that a token source's failure names the
// principal, and that the token never shows in the error.
func TestPrincipalTokenPerRequest(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	auth := mcpadapter.PrincipalToken(func(_ context.Context, p string) (string, error) {
		if p == "mallory" {
			return "", errors.New("unknown user")
		}
		return "secret-" + p, nil
	})
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := testCtx(t)
	for _, p := range []string{"alice", "bob"} {
		res, err := c.CallTool(mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p}), "headers", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var h map[string][]string
		if err := json.Unmarshal([]byte(res.Text()), &h); err != nil {
			t.Fatal(err)
		}
		if got := h["Authorization"]; len(got) != 1 || got[0] != "Bearer secret-"+p {
			t.Errorf("principal %s: Authorization %q", p, got)
		}
	}
	_, err = c.CallTool(mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "mallory"}), "headers", nil, nil)
	var pe *mcpadapter.PrincipalAuthError
	if !errors.As(err, &pe) || pe.Principal != "mallory" || !strings.Contains(err.Error(), "unknown user") {
		t.Fatalf("got %v; want a *PrincipalAuthError for mallory", err)
	}
}

// TestCallIdentityRefusedHeader checks that a CallIdentity may not set
// Authorization (or another header the adapter owns) nor a name that is
// not an HTTP token (the empty name included), and that the value is not
// repeated in the error.
func TestCallIdentityRefusedHeader(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken("server-token")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := testCtx(t)
	for _, h := range []string{"Authorization", "cookie", "Mcp-Session-Id", "Bad Name", ""} {
		id := &mcpadapter.CallIdentity{Principal: "alice", Headers: map[string]string{h: "hunter2"}}
		_, err := c.CallTool(mcpadapter.WithCallIdentity(ctx, id), "headers", nil, nil)
		var ie *mcpadapter.IdentityError
		if !errors.As(err, &ie) || ie.Header != h || ie.Principal != "alice" {
			t.Errorf("header %q: got %v; want an *IdentityError naming it", h, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("header %q: the error shows the value: %v", h, err)
		}
	}
	// The static Authorization stays; an identity header overrides a
	// ClientOptions header of the same name.
	c2, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Auth: mcpadapter.BearerToken("server-token"), Headers: map[string]string{"X-Tenant": "default"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c2.Close() })
	res, err := c2.CallTool(mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Headers: map[string]string{"x-tenant": "acme"}}), "headers", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h map[string][]string
	if err := json.Unmarshal([]byte(res.Text()), &h); err != nil {
		t.Fatal(err)
	}
	if got := h["X-Tenant"]; len(got) != 1 || got[0] != "acme" {
		t.Errorf("X-Tenant %q; want the identity's [acme]", got)
	}
	if got := h["Authorization"]; len(got) != 1 || got[0] != "Bearer server-token" {
		t.Errorf("Authorization %q; want the Auth's", got)
	}
}

// TestCallIdentityStdio checks the documented rule for stdio: no headers
// exist there, so Headers are ignored, and Meta still reaches the server.
func TestCallIdentityStdio(t *testing.T) {
	c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := mcpadapter.WithCallIdentity(testCtx(t), &mcpadapter.CallIdentity{
		Principal: "alice", Headers: map[string]string{testserver.PrincipalHeader: "alice"}, Meta: map[string]any{"tenant": "acme", "user": "alice"},
	})
	res, err := c.CallTool(ctx, "whoami", nil, &mcpadapter.CallOptions{Meta: map[string]any{"user": "alice@call"}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := whoamiOf(res)
	if err != nil {
		t.Fatal(err)
	}
	if w.Principal != "" || w.Meta["tenant"] != "acme" || w.Meta["user"] != "alice@call" {
		t.Fatalf("stdio whoami = %+v; want no header, tenant acme, and CallOptions.Meta's user", w)
	}
}
