package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// payTransforms hides the ask tool's secret argument of server "pay"
// behind a fixed value.
var payTransforms = map[string]*mcpadapter.ServerTransform{"pay": {Tools: map[string]*mcpadapter.ToolTransform{
	"ask": {Arguments: map[string]*mcpadapter.ArgTransform{"secret": {Hide: true, Default: json.RawMessage(`"tenant-42"`)}}},
}}}

func payTools(t *testing.T, srv *hitltest.Server) map[string]*mcpadapter.Tool {
	t.Helper()
	c, err := mcpadapter.NewClient(srv.Server, &mcpadapter.ClientOptions{Name: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	return hitlTools(t, c, &mcpadapter.Options{Transforms: payTransforms})
}

// TestHITLResumeReappliesWhatTheAdapterOwns: every round of a call is
// made as the first was: the tool's hidden arguments are filled in again
// (they are not in the pending call, even when it is saved), arguments
// edited in a saved pending call cannot set them, and the call's _meta
// is sent on every round. A pending call is resumed only by its own tool.
func TestHITLResumeReappliesWhatTheAdapterOwns(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hitltest.NewServer(testserver.Modern)
	tools := payTools(t, srv)
	ask := tools["ask"]
	res, err := ask.CallWith(ctx, json.RawMessage(`{"call":"x","n":3,"secret":"model-tries"}`), &mcpadapter.CallOptions{Meta: map[string]any{"trace": "t1"}})
	p := mustInterrupt(t, res, err)
	saved, _ := json.Marshal(p)
	if strings.Contains(string(saved), "tenant-42") {
		t.Fatalf("the hidden value is in the saved pending call: %s", saved)
	}
	u := &hitltest.User{}
	res, err = ask.Resume(ctx, p, u.Answer(p.Interrupt()))
	p2 := mustInterrupt(t, res, err)
	// Someone edits the saved pending call's arguments.
	var edited mcpadapter.PendingCall
	_ = json.Unmarshal(saved, &edited)
	p2.Arguments = json.RawMessage(`{"call":"x","n":3,"secret":"evil"}`)
	res, err = ask.Resume(ctx, p2, u.Answer(p2.Interrupt()))
	p3 := mustInterrupt(t, res, err)
	// Another tool, and the client without the tool's transforms, refuse it.
	var de *mcpadapter.ResumeDeniedError
	if _, err := tools["echo"].Resume(ctx, p3, u.Answer(p3.Interrupt())); !errors.As(err, &de) || de.Reason != mcpadapter.DeniedTool {
		t.Fatalf("resumed by another tool: %v", err)
	}
	if _, err := ask.Client().Resume(ctx, p3, u.Answer(p3.Interrupt())); !errors.As(err, &de) || de.Reason != mcpadapter.DeniedTool {
		t.Fatalf("resumed without the tool's transforms: %v", err)
	}
	u.Forget(p3.Requests[0].Message) // the two refused answers above
	res, err = ask.Resume(ctx, p3, u.Answer(p3.Interrupt()))
	if err != nil || res.Text() != "x done" {
		t.Fatalf("last round: %v %+v", err, res)
	}
	seen := srv.Seen("x")
	if len(seen) != 4 {
		t.Fatalf("the server saw %d requests, want 4", len(seen))
	}
	for i, s := range seen {
		if s.Args["secret"] != "tenant-42" || s.Meta["trace"] != "t1" {
			t.Errorf("round %d: arguments %v, _meta %v", i+1, s.Args, s.Meta)
		}
	}
	hitltest.Match(t, u, srv)
}

// TestHITLQueuedCallKeepsTransforms: on a handshake-era server a call
// queued behind another's question is made, when resumed, with its
// tool's hidden arguments filled in again.
func TestHITLQueuedCallKeepsTransforms(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hitltest.NewServer(testserver.Legacy)
	tools := payTools(t, srv)
	u := &hitltest.User{}
	outs := runTurn(t, ctx, tools, []hitlCall{{"ask", askArgs("first", 1)}, {"ask", askArgs("second", 1)}}, u)
	for _, o := range outs {
		if !strings.HasSuffix(o.Result.Text(), " done") {
			t.Errorf("%s: %q", o.Call.args, o.Result.Text())
		}
	}
	for _, call := range []string{"first", "second"} {
		seen := srv.Seen(call)
		if len(seen) != 1 || seen[0].Args["secret"] != "tenant-42" {
			t.Errorf("%s: the server saw %+v", call, seen)
		}
	}
	hitltest.Match(t, u, srv)
}

// TestHITLRetryKeepsTheRoundCount: after a -32042 (URL elicitation
// required) and its retry, the questions go on counting rounds.
func TestHITLRetryKeepsTheRoundCount(t *testing.T) {
	t.Parallel()
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(era)
			ask := hitlTools(t, srv.Server, nil)["ask"]
			res, err := ask.Call(ctx, json.RawMessage(`{"call":"r","n":2,"loginFirst":true}`))
			p := mustInterrupt(t, res, err)
			if !p.Retry || p.Round != 1 {
				t.Fatalf("the sign-in question: %+v", p)
			}
			res, err = ask.Resume(ctx, p, &elicitation.Resume{Responses: map[string]elicitation.Response{p.Requests[0].Key: {Action: elicitation.Accept}}})
			p2 := mustInterrupt(t, res, err)
			if p2.Round != 2 || p2.Requests[0].Message != hitltest.Question("r", 1, 2) {
				t.Fatalf("the first question after the retry: round %d, %+v", p2.Round, p2.Requests)
			}
			u := &hitltest.User{}
			res, err = ask.Resume(ctx, p2, u.Answer(p2.Interrupt()))
			p3 := mustInterrupt(t, res, err)
			if p3.Round != 3 {
				t.Errorf("the second question: round %d", p3.Round)
			}
			res, err = ask.Resume(ctx, p3, u.Answer(p3.Interrupt()))
			if err != nil || res.Text() != "r done" {
				t.Fatalf("%v %+v", err, res)
			}
			hitltest.Match(t, u, srv)
		})
	}
}

// TestHITLLoadSheddingHonoursContext: a 2026-07-28 server that keeps
// answering input_required with no questions is asked again a few
// times; a call whose context ends meanwhile returns at once, without
// asking again.
func TestHITLLoadSheddingHonoursContext(t *testing.T) {
	t.Parallel()
	srv := hitltest.NewServer(testserver.Modern)
	shed := hitlTools(t, srv.Server, nil)["shed"]
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := shed.Call(ctx, nil)
		done <- err
	}()
	select {
	case <-srv.ShedAsked:
	case err := <-done:
		t.Fatalf("returned before the server was asked: %v", err)
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the call ended with %v, want context.Canceled", err)
	}
	if n := srv.Shed(); n != 1 {
		t.Errorf("the server was asked %d times, want 1: the wait ignored the context", n)
	}
}

// TestHITLCallToolResumesItsOwnServer: through the tool-search pair, a
// pending call is resumed on the server that asked, whatever tool now has
// the name the model used.
func TestHITLCallToolResumesItsOwnServer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a := hitltest.NewServer(testserver.Modern)
	b := hitltest.NewServer(testserver.Modern)
	cfg, err := mcpadapter.ParseConfig(fmt.Appendf(nil, `{"mcpServers":{"a":{"url":%q},"b":{"url":%q}}}`,
		testserver.ServeStreamable(t, a.Server, testserver.Stateless()), testserver.ServeStreamable(t, b.Server, testserver.Stateless())))
	if err != nil {
		t.Fatal(err)
	}
	tools := hitlTools(t, cfg, &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
	callTool := tools[mcpadapter.CallToolName]
	res, err := callTool.Call(ctx, json.RawMessage(`{"name":"b_ask","arguments":{"call":"cb","n":1}}`))
	p := mustInterrupt(t, res, err)
	if p.Server != "b" {
		t.Fatalf("pending %+v", p)
	}
	// A pending call whose model name now points at the other server's tool.
	p.ModelTool = "a_ask"
	u := &hitltest.User{}
	res, err = callTool.Resume(ctx, p, u.Answer(p.Interrupt()))
	if err != nil || res.Text() != "cb done" {
		t.Fatalf("%v %+v", err, res)
	}
	if a.Started("cb") != 0 || len(a.Received()) != 0 {
		t.Errorf("server a got the call")
	}
	hitltest.Match(t, u, b)
}
