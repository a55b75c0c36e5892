package mcpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPrincipalsTasksNeverCross: several principals start tasks through
// one Client of a 2026-07-28 server that makes a task per user, each
// concurrently, and follow them to their results: each result names its
// own principal, each handle is for its principal; another principal's
// ResumeTask with that handle is refused with a ResumeDeniedError and
// gets nothing of the result, and the owner's ResumeTask gets it.
func TestPrincipalsTasksNeverCross(t *testing.T) {
	c, _ := perUserClient(t, true, &mcpadapter.ClientOptions{Tasks: &mcpadapter.TaskOptions{MinPoll: time.Millisecond, MaxPoll: 20 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	principals := []string{"alice", "bob", "carol", "dave"}
	var (
		mu      sync.Mutex
		handles = map[string][]mcpadapter.TaskHandle{}
		errs    []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			p := principals[w%len(principals)]
			for range 3 {
				var got []mcpadapter.TaskHandle
				res, err := c.CallTool(as(ctx, p), "whoamitask", nil, &mcpadapter.CallOptions{
					OnTask: func(h mcpadapter.TaskHandle) { got = append(got, h) }})
				if err != nil || res.IsError || res.Text() != p {
					fail("%s: whoamitask: %v %v", p, err, res)
					continue
				}
				if len(got) != 1 {
					fail("%s: %d task handles, want 1 (the call ran as a task)", p, len(got))
					continue
				}
				if got[0].Principal != p {
					fail("%s's task handle is for %q", p, got[0].Principal)
				}
				mu.Lock()
				handles[p] = append(handles[p], got[0])
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		return
	}
	errs = nil
	for i, p := range principals {
		other := principals[(i+1)%len(principals)]
		for _, h := range handles[p] {
			wg.Go(func() {
				res, err := c.ResumeTask(as(ctx, other), h, nil)
				var denied *mcpadapter.ResumeDeniedError
				if !errors.As(err, &denied) || denied.Reason != mcpadapter.DeniedPrincipal {
					fail("%s resumed %s's task %s: %v, want a ResumeDeniedError", other, p, h.TaskID, err)
				}
				if res != nil {
					fail("%s's resume of %s's task got a result: %q", other, p, res.Text())
				}
				if _, err := c.ResumeTask(ctx, h, nil); !errors.As(err, &denied) {
					fail("no one resumed %s's task %s: %v, want a ResumeDeniedError", p, h.TaskID, err)
				}
				res, err = c.ResumeTask(as(ctx, p), h, nil)
				if err != nil || res.IsError || res.Text() != p {
					fail("%s resumed their task %s: %v %v", p, h.TaskID, err, res)
				}
			})
		}
	}
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
}

// TestPrincipalsSamplingSeesTheCallsIdentity: two principals call,
// concurrently and through one Client, a handshake-era tool that asks the
// client's model during the call (sampling/createMessage): the
// application's SamplingHandler sees each request with the identity of
// the call it belongs to, and its answer reaches that call only.
func TestPrincipalsSamplingSeesTheCallsIdentity(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		errs []string
	)
	opts := &mcpadapter.ClientOptions{
		//lint:ignore SA1019 sampling lives in the handshake era, which this server speaks
		SamplingHandler: func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			p := "<none>"
			if id := mcpadapter.CallIdentityFrom(ctx); id != nil {
				p = id.Principal
			}
			asked := ""
			if len(r.Params.Messages) > 0 {
				if tc, ok := r.Params.Messages[0].Content.(*mcp.TextContent); ok {
					asked = tc.Text
				}
			}
			mu.Lock()
			seen[p]++
			if want := "sample for " + p; asked != want {
				errs = append(errs, fmt.Sprintf("the sampling request %q reached the application as principal %q", asked, p))
			}
			mu.Unlock()
			//lint:ignore SA1019 sampling lives in the handshake era, which this server speaks
			return &mcp.CreateMessageResult{Model: "scripted", Role: "assistant", Content: &mcp.TextContent{Text: "model for " + p}}, nil
		},
	}
	c, _ := perUserClient(t, false, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	principals := []string{"alice", "bob"}
	const rounds = 10
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			p := principals[w%len(principals)]
			for range rounds {
				got, err := asCall(ctx, c, p, "sample")
				if want := p + " sampled: model for " + p; err != nil || got != want {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s: sample: %q %v, want %q", p, got, err, want))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, e := range errs {
		t.Error(e)
	}
	for _, p := range principals {
		if n := seen[p]; n != 2*rounds {
			t.Errorf("the application saw %d sampling requests as %s, want %d: %v", n, p, 2*rounds, seen)
		}
	}
	if len(seen) != len(principals) {
		t.Errorf("sampling requests reached the application as %v", seen)
	}
}
