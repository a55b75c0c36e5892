package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/park"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCloseCancelsParkedQuestions: closing an Adapter while a
// handshake-era server waits for the user's answer tells that server
// "cancel" before the connection goes, so the server's call ends as the
// protocol says instead of waiting on a connection nobody answers.
func TestCloseCancelsParkedQuestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func(t *testing.T, srv *hitltest.Server) any
	}{
		{"http", func(t *testing.T, srv *hitltest.Server) any {
			url, _ := serveBodies(t, srv, testserver.Legacy)
			return url
		}},
		{"in-process", func(t *testing.T, srv *hitltest.Server) any { return srv.Server }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(testserver.Legacy)
			a, err := mcpadapter.New(tc.target(t, srv), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ask := toolMap(t, ctx, a)["ask"]
			res, err := ask.Call(ctx, json.RawMessage(askArgs("closing", 1)))
			mustInterrupt(t, res, err)
			if err := a.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			// The server got "cancel" and its call ended: Close returned
			// after it, or the server finishes within a bounded wait.
			deadline := time.Now().Add(10 * time.Second)
			for srv.Finished("closing") == "" && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := srv.Finished("closing"); got != "closing cancelled at q1" {
				t.Errorf("the server's call ended as %q; received %v", got, srv.Received())
			}
		})
	}
}

// closeTargets serves srv over streamable HTTP (a connection per
// principal) and in-process.
var closeTargets = []struct {
	name   string
	target func(t *testing.T, srv *hitltest.Server) any
}{
	{"http", func(t *testing.T, srv *hitltest.Server) any {
		url, _ := serveBodies(t, srv, testserver.Legacy)
		return url
	}},
	{"in-process", func(t *testing.T, srv *hitltest.Server) any { return srv.Server }},
}

// parkedCloseBound bounds a Close that waits for a server told "cancel":
// park.CloseGrace for the server, then the connection's own close.
const parkedCloseBound = 15 * time.Second

// TestCloseParkedServerNeverEnds: a server told "cancel" by Close that
// never ends its call by itself holds Close up at most the grace period:
// its request is then cancelled (the server sees it end), Close returns,
// and nothing is left running.
func TestCloseParkedServerNeverEnds(t *testing.T) {
	for _, tc := range closeTargets {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			srv := hitltest.NewServer(testserver.Legacy)
			told, ended := make(chan string, 1), make(chan struct{})
			mcp.AddTool(srv.Server, &mcp.Tool{Name: "stubborn"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Sure?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
				if err == nil {
					told <- r.Action
				}
				<-ctx.Done() // ends only when the client gives up the request
				close(ended)
				return nil, nil, ctx.Err()
			})
			target := tc.target(t, srv)
			before := runtime.NumGoroutine()
			a, err := mcpadapter.New(target, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			res, err := toolMap(t, ctx, a)["stubborn"].Call(ctx, json.RawMessage(`{}`))
			mustInterrupt(t, res, err)
			start := time.Now()
			if err := a.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if d := time.Since(start); d > parkedCloseBound {
				t.Errorf("Close took %v", d)
			}
			select {
			case got := <-told:
				if got != "cancel" {
					t.Errorf("the server was told %q", got)
				}
			default:
				t.Error("the server was told nothing")
			}
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the server's call never ended")
			}
			testenv.WaitGoroutines(t, before)
		})
	}
}

// TestCloseParkedServerAsksAgain: a server told "cancel" by Close that
// asks again is told "cancel" again at once, and Close does not wait out
// the grace period for it.
func TestCloseParkedServerAsksAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range closeTargets {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(testserver.Legacy)
			var mu sync.Mutex
			var told []string
			mcp.AddTool(srv.Server, &mcp.Tool{Name: "nag"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				for range 3 {
					r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Now?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
					if err != nil {
						return nil, nil, err
					}
					mu.Lock()
					told = append(told, r.Action)
					mu.Unlock()
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "nagged"}}}, nil, nil
			})
			a, err := mcpadapter.New(tc.target(t, srv), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			res, err := toolMap(t, ctx, a)["nag"].Call(ctx, json.RawMessage(`{}`))
			mustInterrupt(t, res, err)
			start := time.Now()
			if err := a.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if d := time.Since(start); d > park.CloseGrace/2 {
				t.Errorf("Close took %v for a server that ended its call after asking again", d)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(told) != "[cancel cancel cancel]" {
				t.Errorf("the server was told %v", told)
			}
		})
	}
}

// TestCloseManyParkedQuestions: every principal's question open on its
// own connection is told "cancel" by one Close, and every server call
// ends as the protocol says before Close returns.
func TestCloseManyParkedQuestions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hitltest.NewServer(testserver.Legacy)
	url, _ := serveBodies(t, srv, testserver.Legacy)
	a, err := mcpadapter.New(url, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ask := toolMap(t, ctx, a)["ask"]
	const n = 6
	for i := range n {
		who := fmt.Sprint("user-", i)
		pctx := mcpadapter.WithCallIdentity(mcpadapter.WithRun(ctx, who), &mcpadapter.CallIdentity{Principal: who})
		res, err := ask.Call(pctx, json.RawMessage(askArgs(who, 2)))
		mustInterrupt(t, res, err)
	}
	start := time.Now()
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > park.CloseGrace/2 {
		t.Errorf("Close took %v", d)
	}
	for i := range n {
		who := fmt.Sprint("user-", i)
		if got, want := srv.Finished(who), who+" cancelled at q1"; got != want {
			t.Errorf("%s's call ended as %q, want %q", who, got, want)
		}
	}
}

// TestCloseRacingResume: a resume with the user's answer and Close at
// once: the server's call runs once and ends, with the answer, with
// "cancel", or with the connection; the resume returns the call's result
// or an error, never hangs; nothing is left running.
func TestCloseRacingResume(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, tc := range closeTargets {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			for i := range 10 {
				srv := hitltest.NewServer(testserver.Legacy)
				a, err := mcpadapter.New(tc.target(t, srv), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
				if err != nil {
					t.Fatal(err)
				}
				ask := toolMap(t, ctx, a)["ask"]
				call := fmt.Sprint("race-", i)
				res, err := ask.Call(ctx, json.RawMessage(askArgs(call, 1)))
				p := mustInterrupt(t, res, err)
				u := &hitltest.User{}
				resumed := make(chan error, 1)
				go func() {
					res, err := ask.Resume(ctx, p, u.Answer(p.Interrupt()))
					if err == nil && res.Text() != call+" done" && res.Text() != call+" cancelled at q1" {
						err = fmt.Errorf("result %q", res.Text())
					}
					resumed <- err
				}()
				if i%2 == 1 {
					time.Sleep(time.Duration(i) * time.Millisecond)
				}
				if err := a.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				select {
				case err := <-resumed:
					var te *mcpadapter.TransportError
					var ae *mcpadapter.AnsweredError
					if err != nil && !errors.As(err, &te) && !errors.As(err, &ae) {
						t.Errorf("race %d: the resume: %v", i, err)
					}
				case <-time.After(parkedCloseBound):
					t.Fatalf("race %d: the resume never returned", i)
				}
				// The server's call returned the answer's result, or "cancel"'s,
				// or (the answer handed over as the connection closed) an
				// error, which it does not record; nothing is left running
				// either way (WaitGoroutines below).
				if got := srv.Finished(call); got != "" && got != call+" done" && got != call+" cancelled at q1" {
					t.Errorf("race %d: the server's call ended as %q", i, got)
				}
				if n := srv.Started(call); n != 1 {
					t.Errorf("race %d: the server's call started %d times", i, n)
				}
			}
		})
	}
	testenv.WaitGoroutines(t, before)
}

// TestCloseParkedStdioLeavesNoProcess: closing an Adapter while a
// handshake-era stdio server waits for the user's answer returns at once
// (the server ends its call on "cancel") and leaves no process.
func TestCloseParkedStdioLeavesNoProcess(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a, err := mcpadapter.New(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", testserver.Legacy.String()}},
		&mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	pid := serverPID(t, ctx, tools["pid"].Client())
	res, err := tools["book"].Call(ctx, json.RawMessage(`{"date":"Friday"}`))
	mustInterrupt(t, res, err)
	start := time.Now()
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > park.CloseGrace/2 {
		t.Errorf("Close took %v for a server that ends its call on \"cancel\"", d)
	}
	waitGone(t, pid, "the stdio server")
}
