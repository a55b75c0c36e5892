//lint:file-ignore SA1019 sampling and roots, deprecated in 2026-07-28, may still be asked for in a round, which we support

package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client's own multi-round-trip loop (internal/inputwire.AutoRounds)
// against 2026-07-28 servers that ask in rounds: what reaches the server
// and the handlers, on the fast path and on go-sdk's path alike.

// TestAutoRoundsSamplingAnswers: a round's sampling request reaches the
// SamplingHandler with the session it came on, as go-sdk gives it to a
// handler; a handler that returns no result fails the call, and no round
// is sent with a null answer (the server never sees one).
func TestAutoRoundsSamplingAnswers(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hostileServer(testserver.Modern)
	var calls, nullAnswers atomic.Int32
	mcp.AddTool(srv, &mcp.Tool{Name: "think"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		calls.Add(1)
		if resp, ok := req.Params.InputResponses["s"]; ok {
			r, _ := resp.(*mcp.CreateMessageWithToolsResult)
			if r == nil || len(r.Content) == 0 {
				nullAnswers.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no answer"}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "thought"}}}, nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageWithToolsParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}}}, RequestState: "st"}, nil, nil
	})
	var nilResult atomic.Bool
	var noSession atomic.Int32
	trace := &countingHandler{}
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Logger: slog.New(trace), Trace: true,
		SamplingHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if req.Session == nil {
				noSession.Add(1)
			}
			if nilResult.Load() {
				return nil, nil
			}
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "think", json.RawMessage(`{}`), nil)
	if err != nil || res.Text() != "thought" {
		t.Fatalf("a sampled round: %v %+v", err, res)
	}
	if n := noSession.Load(); n != 0 {
		t.Errorf("the SamplingHandler was given no session %d times", n)
	}
	nilResult.Store(true)
	before := calls.Load()
	res, err = c.CallTool(ctx, "think", json.RawMessage(`{}`), nil)
	if err == nil && !res.IsError {
		t.Errorf("a SamplingHandler that returned no result: the call succeeded with %q", res.Text())
	}
	if n := nullAnswers.Load(); n != 0 {
		t.Errorf("the server got %d rounds answered with no sampling result", n)
	}
	for _, r := range trace.all() {
		if r["msg"] == "mcp send" && strings.Contains(r["message"], `"s":null`) {
			t.Errorf("a round was answered with null: %s", r["message"])
		}
	}
	if n := calls.Load() - before; n != 1 {
		t.Errorf("the tool ran %d times, want 1 (the round is not answered)", n)
	}
}

// TestAutoRoundsRootsAnswer: a round that asks a client without roots for
// them gets an empty list, as go-sdk answers roots/list, never null.
func TestAutoRoundsRootsAnswer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hostileServer(testserver.Modern)
	mcp.AddTool(srv, &mcp.Tool{Name: "where"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["r"]
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}, RequestState: "st"}, nil, nil
		}
		r, _ := resp.(*mcp.ListRootsResult)
		switch {
		case r == nil:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no answer"}}}, nil, nil
		case r.Roots == nil:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "roots: null"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "roots: " + strings.Repeat("x", len(r.Roots))}}}, nil, nil
	})
	c, err := mcpadapter.NewClient(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "where", json.RawMessage(`{}`), nil)
	if err != nil || res.Text() != "roots: " {
		t.Fatalf("a roots round: %v, %q; want %q", err, res.Text(), "roots: ")
	}
}

// TestAutoRoundsFailedRetryNotResent: on go-sdk's path (the fast path off)
// as on the fast path (TestFastPathFailedStdioHandOffNotResent), a call
// whose round was answered and whose retry then fails unsent (the server
// process died while the user answered) is not sent again from scratch
// on a new process: the server answered its first round.
func TestAutoRoundsFailedRetryNotResent(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	trace := &countingHandler{}
	var c *mcpadapter.Client
	var asked atomic.Int32
	c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", testserver.Modern.String()}}, &mcpadapter.ClientOptions{
		Logger: slog.New(trace), Trace: true, Timeout: 10 * time.Second, StopTimeout: 200 * time.Millisecond, DisableFastPath: true,
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			// The server dies while the user answers.
			_, _ = c.CallTool(ctx, "crash", json.RawMessage(`{}`), nil)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	echoOK(t, ctx, c, "first")
	reply := `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s1"}}`
	_, err = c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(reply), nil)
	if err == nil {
		t.Fatal("the call succeeded although the server died during it")
	}
	sent := 0
	for _, r := range trace.all() {
		if r["msg"] == "mcp send" && strings.Contains(r["message"], `"method":"tools/call"`) && strings.Contains(r["message"], `"bad_response"`) &&
			!strings.Contains(r["message"], `"inputResponses"`) {
			sent++
		}
	}
	if sent != 1 || asked.Load() != 1 {
		t.Errorf("the call's first round was sent %d times and the user asked %d times, want 1 of each (error: %v)", sent, asked.Load(), err)
	}
	echoOK(t, ctx, c, "after, on a new process")
}

// TestRoundWithoutResultType: a 2026-07-28 server's result that holds
// questions and no resultType is a round for every client of the
// adapter alike (plaincall.Round): the client's own loop answers it with
// the ElicitationHandler, and an ElicitInterrupt tool stops with its
// question; neither takes it for a result.
func TestRoundWithoutResultType(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reply := `{"jsonrpc":"2.0","id":@ID@,"result":{"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s1"}}`
	srv := stdioServer(t, "-era", testserver.Modern.String())
	var asked atomic.Int32
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The scripted server asks again whatever the answer: the loop gives up.
	if res, err := c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(reply), nil); err == nil && !res.IsError || asked.Load() == 0 {
		t.Errorf("the client's own loop: asked %d times, result %+v, error %v", asked.Load(), res, err)
	}
	tools := hitlTools(t, srv, nil)
	res, err := tools["bad_response"].Call(ctx, testserver.ScriptedArgs(reply))
	var ir *mcpadapter.InputRequiredError
	if !errors.As(err, &ir) || len(ir.Pending.Requests) != 1 || ir.Pending.Requests[0].Key != "q" {
		t.Errorf("ElicitInterrupt: %+v, %v; want the question q", res, err)
	}
}

// TestRoundWithoutQuestions: input_required with no questions at all (not
// even an empty list, which is load shedding) is no round; the call's
// error says what the server sent, not that the client lacks an
// elicitation handler, which it has.
func TestRoundWithoutQuestions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-era", testserver.Modern.String()), &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reply := `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"input_required"}}`
	res, err := c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(reply), nil)
	if err == nil || strings.Contains(err.Error(), "elicitation") || !strings.Contains(err.Error(), "no questions") {
		t.Errorf("input_required without questions: %+v, %v; want an error saying it asked no questions", res, err)
	}
	// An ElicitInterrupt tool reads it by the same rule: no round (and no
	// load shed, which is an empty list of questions: the server, which
	// answers every call alike, would be called again until the client
	// gave up on its load shedding, and the error would say so).
	res, err = hitlTools(t, c, nil)["bad_response"].Call(ctx, testserver.ScriptedArgs(reply))
	if err == nil || !strings.Contains(err.Error(), "no questions") || strings.Contains(err.Error(), "shed") {
		t.Errorf("ElicitInterrupt, input_required without questions: %+v, %v; want an error saying it asked no questions, without retrying", res, err)
	}
}

// TestAutoRoundsCancelledWhileAsking: a call whose context ends while the
// ElicitationHandler has the server's question (over streamable HTTP,
// on the fast path and on go-sdk's) ends at once with the context's
// error; the tool ran once, no later round is sent, and the client's
// next call works.
func TestAutoRoundsCancelledWhileAsking(t *testing.T) {
	t.Parallel()
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprint("DisableFastPath=", disable), func(t *testing.T) {
			t.Parallel()
			srv := hostileServer(testserver.Modern)
			var runs, answered atomic.Int32
			mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				runs.Add(1)
				if req.Params.InputResponses != nil {
					answered.Add(1)
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil, nil
				}
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "?"}}, RequestState: "s"}, nil, nil
			})
			mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
			entered := make(chan struct{}, 1)
			c, err := mcpadapter.NewClient(testserver.ServeStreamable(t, srv, testserver.Stateless()), &mcpadapter.ClientOptions{DisableFastPath: disable,
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					entered <- struct{}{}
					<-ctx.Done()
					return nil, ctx.Err()
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			echoOK(t, testCtx(t), c, "first")
			ctx, cancel := context.WithCancel(testCtx(t))
			go func() { <-entered; cancel() }()
			start := time.Now()
			_, err = c.CallTool(ctx, "ask", json.RawMessage(`{}`), nil)
			if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
				t.Errorf("cancelled while asking: %v after %v; want context.Canceled at once", err, time.Since(start))
			}
			if r, a := runs.Load(), answered.Load(); r != 1 || a != 0 {
				t.Errorf("the tool ran %d times, %d of them answered; want 1, 0", r, a)
			}
			echoOK(t, testCtx(t), c, "after")
		})
	}
}

// TestAutoRoundsNotForInterrupts: the tools of an ElicitInterrupt adapter
// built on a client with an ElicitationHandler stop with the round's
// question; the client's own loop, which would answer it with that
// handler, is not theirs.
func TestAutoRoundsNotForInterrupts(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var asked atomic.Int32
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 2}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if res, err := c.CallTool(ctx, "book", json.RawMessage(`{"date":"Fri"}`), nil); err != nil || !strings.HasPrefix(res.Text(), "Booked 2") || asked.Load() != 1 {
		t.Fatalf("the client's own loop: %v %+v, asked %d", err, res, asked.Load())
	}
	res, err := hitlTools(t, c, nil)["book"].Call(ctx, json.RawMessage(`{"date":"Fri"}`))
	var ir *mcpadapter.InputRequiredError
	if !errors.As(err, &ir) || asked.Load() != 1 {
		t.Errorf("ElicitInterrupt: %+v, %v, the handler asked %d times; want the question, the handler not asked again", res, err, asked.Load())
	}
}
