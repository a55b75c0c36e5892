package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addHold adds the tool "hold" to srv: it asks one question and, once
// answered, never answers the call (it waits until the call is cancelled
// or the test ends).
func addHold(t *testing.T, srv *mcp.Server, e testserver.Era) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hold := func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-release:
		}
	}
	schema := map[string]any{}
	_ = json.Unmarshal([]byte(hitltest.Form), &schema)
	mcp.AddTool(srv, &mcp.Tool{Name: "hold", Description: "Asks, then never answers."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if e == testserver.Legacy {
				if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "hold?", RequestedSchema: schema}); err != nil {
					return nil, nil, err
				}
				hold(ctx)
				return nil, nil, ctx.Err()
			}
			if req.Params.RequestState == "" {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Mode: "form", Message: "hold?", RequestedSchema: schema}},
					RequestState: "held"}, nil, nil
			}
			hold(ctx)
			return nil, nil, ctx.Err()
		})
}

// TestHITLResumeKeepsToolTimeout: a tool's own timeout bounds the rounds
// after the user's answer too: when the server never answers after it,
// the resumed call ends with a *TimeoutError naming the tool's timeout.
func TestHITLResumeKeepsToolTimeout(t *testing.T) {
	t.Parallel()
	const limit = time.Second
	for _, e := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(e.String(), func(t *testing.T) {
			t.Parallel()
			// The test's own bound is well past the tool's timeout.
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			srv := hitltest.NewServer(e)
			addHold(t, srv.Server, e)
			c, err := mcpadapter.NewClient(srv.Server, &mcpadapter.ClientOptions{Name: "h"})
			if err != nil {
				t.Fatal(err)
			}
			tools := hitlTools(t, c, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{
				"h": {Tools: map[string]*mcpadapter.ToolTransform{"hold": {Timeout: limit}}}}})
			hold := tools["hold"]
			res, err := hold.Call(ctx, nil)
			p := mustInterrupt(t, res, err)
			u := &hitltest.User{}
			res, err = hold.Resume(ctx, p, u.Answer(p.Interrupt()))
			var te *mcpadapter.TimeoutError
			if !errors.As(err, &te) {
				t.Fatalf("resumed call of a server that never answers: %v %+v; want the tool's *TimeoutError", err, res)
			}
			if te.Limit != limit || !strings.Contains(te.Setting, "ToolTransform.Timeout") {
				t.Errorf("timeout %v set by %q; want the tool's %v (ToolTransform.Timeout)", te.Limit, te.Setting, limit)
			}
			if ctx.Err() != nil {
				t.Errorf("the test's own bound ended the call: %v", err)
			}
		})
	}
}

// TestHITLResumeTakesToolTaskMode: a call queued behind another call's
// question on a 2025-11-25 server is resumed through a tool whose task
// mode is TaskPrefer, and its pending call names no task mode of its own
// (made with Client.CallTool, or saved by a process whose tool had none):
// the resumed round is a task-augmented tools/call, as the tool's calls
// are.
func TestHITLResumeTakesToolTaskMode(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var tasks atomic.Int32
	ts := newTaskServer(t, taskserver.Options{Core: true, PollInterval: 20, OnCreate: func(context.Context, string) { tasks.Add(1) }})
	schema := map[string]any{}
	_ = json.Unmarshal([]byte(hitltest.Form), &schema)
	mcp.AddTool(ts.MCP, &mcp.Tool{Name: "confirm", Description: "Asks on the same connection."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "confirm?", RequestedSchema: schema})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "confirm " + r.Action}}}, nil, nil
		})
	hs := httptest.NewServer(ts.Handler())
	t.Cleanup(hs.Close)
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Name: "tasks"})
	if err != nil {
		t.Fatal(err)
	}
	tools := hitlTools(t, c, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{
		"tasks": {Tools: map[string]*mcpadapter.ToolTransform{"work": {Task: mcpadapter.TaskPrefer}}}}})
	work := tools["work"]
	c = work.Client()
	run := mcpadapter.WithRun(ctx, "turn-1")
	res, err := tools["confirm"].Call(run, nil)
	asking := mustInterrupt(t, res, err)
	res, err = c.CallTool(run, "work", json.RawMessage(`{"steps":1,"stepMs":1}`), nil)
	queued := mustInterrupt(t, res, err)
	if queued.Asks() || queued.Queued == "" {
		t.Fatalf("work is not queued behind the question: %+v", queued)
	}
	var got *mcpadapter.Result
	var gotErr error
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		got, gotErr = work.Resume(run, queued, nil)
	}()
	res, err = tools["confirm"].Resume(run, asking, (&hitltest.User{}).Answer(asking.Interrupt()))
	if err != nil || res.Text() != "confirm accept" {
		t.Errorf("the question's call: %v %+v", err, res)
	}
	<-resumed
	if gotErr != nil || got.IsError || got.Text() != "done: 1 steps" {
		t.Fatalf("resumed queued call: %v %+v; want the task's result", gotErr, got)
	}
	if n := tasks.Load(); n != 1 {
		t.Errorf("the server made %d tasks; want 1: the resumed call goes task-augmented", n)
	}
}

// TestHITLResumeChecksArguments: the arguments of a pending call are
// checked again on resume, as on the first call: a pending call whose
// arguments were edited into something that is not a JSON object, or
// that breaks the server's input schema, is refused with an error result
// and nothing reaches the server; the question stays open, and the
// pending call as it was is answered.
func TestHITLResumeChecksArguments(t *testing.T) {
	t.Parallel()
	for _, e := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(e.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(e)
			var sent atomic.Int32 // every tools/call and elicitation answer
			srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/call" {
						sent.Add(1)
					}
					return next(ctx, method, req)
				}
			})
			srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if method == "elicitation/create" {
						sent.Add(1) // the answer came back
					}
					return res, err
				}
			})
			tools := hitlTools(t, srv.Server, nil)
			ask := tools["ask"]
			res, err := ask.Call(ctx, json.RawMessage(askArgs("x", 1)))
			p := mustInterrupt(t, res, err)
			before := sent.Load()
			u := &hitltest.User{}
			for _, args := range []string{`[1]`, `{"call":"x","n":"one"}`} {
				edited := *p
				edited.Arguments = json.RawMessage(args)
				res, err := ask.Resume(ctx, &edited, u.Answer(edited.Interrupt()))
				if err != nil || res == nil || !res.IsError || !strings.Contains(res.Text(), "Invalid arguments") {
					t.Errorf("pending call with arguments %s: %v %+v; want an invalid-arguments error result", args, err, res)
				}
			}
			if n := sent.Load() - before; n != 0 {
				t.Errorf("%d requests or answers reached the server for edited pending calls; want none", n)
			}
			res, err = ask.Resume(ctx, p, u.Answer(p.Interrupt()))
			if err != nil || res.Text() != "x done" {
				t.Fatalf("the pending call as it was: %v %+v", err, res)
			}
			hitltest.Match(t, u, srv)
		})
	}
}
