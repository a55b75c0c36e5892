package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// denyTool refuses one tool to everyone.
type denyTool string

func (d denyTool) Allow(_ context.Context, _, _, _, name string) bool { return name != string(d) }

// TestSetPolicy: a policy replaced while clients stay connected decides
// their next requests at once, and clients of both eras are told their
// lists changed; removing it gives back what it hid.
func TestSetPolicy(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "s", Target: up.URL}}, &Options{Policy: denyTool("add")})
	var handshake, modern atomic.Int32
	a := connect(t, url, v1125, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { handshake.Add(1) }})
	b := connect(t, url, v0728, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { modern.Add(1) }})
	ctx := testCtx(t, 30*time.Second)
	if names := toolNames(t, a); contains(names, "add") || !contains(names, "echo") {
		t.Fatalf("tools under the first policy: %v", names)
	}
	time.Sleep(200 * time.Millisecond) // b's subscription stream opens
	g.SetPolicy(denyTool("echo"))
	if names := toolNames(t, b); !contains(names, "add") || contains(names, "echo") {
		t.Errorf("tools under the new policy: %v", names)
	}
	_, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a tool the new policy refuses was called: %v", err)
	}
	if res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil || res.IsError {
		t.Errorf("a tool the new policy gives: %v %+v", err, res)
	}
	deadline := time.Now().Add(20 * time.Second)
	for handshake.Load() == 0 || modern.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("list_changed after the policy changed: handshake %d, 2026-07-28 %d", handshake.Load(), modern.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.SetPolicy(nil)
	if names := toolNames(t, a); !contains(names, "add") || !contains(names, "echo") {
		t.Errorf("tools without a policy: %v", names)
	}
}

// TestSetPolicyParkedCall: a call parked for a question (a handshake-era
// server asked a 2026-07-28 client mid-call) that the new policy refuses
// is not resumed by the client's answers, whichever tool name the retry
// carries: the answers never reach the refused tool.
func TestSetPolicyParkedCall(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "s", Target: up.URL}}, &Options{Policy: denyTool("none")})
	cs := connect(t, url, v0728, &mcp.ClientOptions{
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
	})
	ctx := testCtx(t, 30*time.Second)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "sunday"}})
	if err != nil || !res.NeedsInput() || !strings.HasPrefix(res.RequestState, statePrefix) {
		t.Fatalf("the first round: %+v, %v", res, err)
	}
	answers := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		answers[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 9}}
	}
	g.SetPolicy(denyTool("book"))
	for _, name := range []string{"book", "echo"} {
		got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"date": "sunday"}, RequestState: res.RequestState, InputResponses: answers})
		if err == nil || strings.Contains(texts(got), "Booked") {
			t.Errorf("the answers sent as a call of %q resumed a call of a tool the policy refuses: %q, %v", name, texts(got), err)
		}
	}
	// The refused call's question is withdrawn with it: nothing of the
	// gateway's waits for its answer once the gateway is closed.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if left := gatewayGoroutines(); left != "" {
		t.Fatalf("goroutines of the gateway left after Close:\n%s", left)
	}
}

// TestSetPolicyTasks: a task of a tool the new policy refuses its
// principal is gone for the principal: its result is not handed out
// (tasks/result, tasks/get), the call it runs is cancelled and answers
// reach it no more (tasks/update); a task of a tool still allowed goes on.
func TestSetPolicyTasks(t *testing.T) {
	b := startTaskBackends(t)
	g, url := taskGateway(t, b, &Options{Policy: denyTool("none")})
	c := newRawRPC(t, url, v1125, "alice", `{}`)
	modern := newRawRPC(t, url, v0728, "alice", `{}`)
	done := c.startTask("plain_echo", `{"text":"secret"}`)
	c.waitStatus(done, "completed")
	running := c.startTask("plain_slow", `{"ms":30000}`)
	mrunning := modern.startTask("plain_slow", `{"ms":30000}`)
	kept := c.startTask("plain_add", `{"a":1,"b":2}`)
	c.waitStatus(kept, "completed")
	g.SetPolicy(denyTools{"echo": true, "slow": true})
	for _, m := range []string{"tasks/result", "tasks/get"} {
		res, reply := c.do(testCtx(t, 10*time.Second), m, `{"taskId":"`+done+`"}`, nil)
		if reply.Error == nil || strings.Contains(string(res), "secret") {
			t.Errorf("%s of a task of a tool the policy now refuses: %s %+v", m, res, reply.Error)
		}
	}
	if e := modern.callErr("tasks/update", `{"taskId":"`+mrunning+`","inputResponses":{}}`); e == "" {
		t.Error("tasks/update of a task of a tool the policy now refuses was taken")
	}
	if e := c.callErr("tasks/get", `{"taskId":"`+running+`"}`); !strings.Contains(e, "unknown task") {
		t.Errorf("tasks/get of a running task of a tool the policy now refuses: %q", e)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.plain.Cancellations() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the calls of the refused tasks still run at the server: %d of 2 cancelled", b.plain.Cancellations())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := c.call("tasks/result", `{"taskId":"`+kept+`"}`); !strings.Contains(fmt.Sprint(res), "3") {
		t.Errorf("the task of a tool still allowed: %v", res)
	}
}

// denyTools refuses the tools it lists to everyone.
type denyTools map[string]bool

func (d denyTools) Allow(_ context.Context, _, _, _, name string) bool { return !d[name] }

// TestSetPolicyResourceSubscriptions: a client subscribed to a resource
// gets no more of its updates once a new policy refuses it the resource,
// and gets them again when a policy gives it back.
func TestSetPolicyResourceSubscriptions(t *testing.T) {
	const secret, open = "res://docs/secret", "res://docs/open"
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs"}, &mcp.ServerOptions{
		SupportedProtocolVersions: testserver.LegacyVersions,
		SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	for _, uri := range []string{secret, open} {
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "v"}}}, nil
		})
	}
	g, url := startGateway(t, []Server{{Name: "docs", Target: srv}}, nil)
	updates := make(chan string, 16)
	a := connect(t, url, v1125, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		updates <- r.Params.URI
	}})
	ctx := testCtx(t, 20*time.Second)
	for _, uri := range []string{secret, open} {
		if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	// next sends an update of each resource, secret first, and returns
	// those the client got, up to the open one's (the updates come in
	// order on one stream).
	next := func() []string {
		t.Helper()
		for _, uri := range []string{secret, open} {
			_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		var got []string
		for {
			select {
			case uri := <-updates:
				got = append(got, uri)
				if uri == open {
					return got
				}
			case <-ctx.Done():
				t.Fatalf("no update of %s (got %v)", open, got)
			}
		}
	}
	if got := next(); len(got) != 2 {
		t.Fatalf("updates without a policy: %v", got)
	}
	g.SetPolicy(denyTool(secret))
	if got := next(); len(got) != 1 {
		t.Errorf("updates once the policy refuses %s: %v", secret, got)
	}
	g.SetPolicy(nil)
	if got := next(); len(got) != 2 {
		t.Errorf("updates once the policy gives it back: %v", got)
	}
}

// TestSetPolicyResourceSubscriptionsAfterReload: a client subscribed to a
// resource of a server whose entry a reload replaced gets none of the new
// server's updates of it that the policy in force refuses it, though
// another client's subscription brings them to the gateway.
func TestSetPolicyResourceSubscriptionsAfterReload(t *testing.T) {
	const secret, open = "res://docs/secret", "res://docs/open"
	docs := func() *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "docs"}, &mcp.ServerOptions{
			SupportedProtocolVersions: testserver.LegacyVersions,
			SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		for _, uri := range []string{secret, open} {
			srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "v"}}}, nil
			})
		}
		return srv
	}
	first, second := docs(), docs()
	g, url := startGateway(t, []Server{{Name: "docs", Target: first}}, nil)
	updates := make(chan string, 16)
	a := connect(t, url, v1125, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		updates <- r.Params.URI
	}})
	ctx := testCtx(t, 20*time.Second)
	if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: secret}); err != nil {
		t.Fatal(err)
	}
	if err := g.Reload(ctx, []Server{{Name: "docs", Target: second}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: open}); err != nil {
		t.Fatal(err)
	}
	b := connect(t, url, v1125, nil)
	if err := b.Subscribe(ctx, &mcp.SubscribeParams{URI: secret}); err != nil {
		t.Fatal(err)
	}
	g.SetPolicy(denyTool(secret))
	for _, uri := range []string{secret, open} {
		_ = second.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
	var got []string
	for len(got) == 0 || got[len(got)-1] != open {
		select {
		case uri := <-updates:
			got = append(got, uri)
		case <-ctx.Done():
			t.Fatalf("no update of %s (got %v)", open, got)
		}
	}
	if len(got) != 1 {
		t.Errorf("updates once the policy refuses %s: %v", secret, got)
	}
}
