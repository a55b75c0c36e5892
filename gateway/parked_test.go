package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asking is a handshake-era server whose ask tool asks, with
// elicitation/create mid-call, for a name for its argument who, and
// answers "WHO got NAME"; it records every answer it receives.
type asking struct {
	srv *mcp.Server
	mu  sync.Mutex
	got []string // "WHO got NAME", one per answer received
}

func newAsking() *asking {
	a := &asking{srv: mcp.NewServer(&mcp.Implementation{Name: "asking"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})}
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
	a.srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Who string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "a name for " + in.Who + "?", RequestedSchema: schema})
			if err != nil {
				return nil, err
			}
			s := fmt.Sprintf("%s got %v", in.Who, res.Content["name"])
			a.mu.Lock()
			a.got = append(a.got, s)
			a.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		})
	return a
}

// answers returns how many times the server received each answer.
func (a *asking) answers() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := make(map[string]int)
	for _, s := range a.got {
		n[s]++
	}
	return n
}

// manualRounds is a 2026-07-28 client that sees input_required results
// itself.
var manualRounds = &mcp.ClientOptions{
	MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
}

// nameAnswers answers every question of res with name.
func nameAnswers(res *mcp.CallToolResult, name string) mcp.InputResponseMap {
	out := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		out[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}
	}
	return out
}

func askParams(who string, res *mcp.CallToolResult, answers mcp.InputResponseMap) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"who": who}, InputResponses: answers}
	if res != nil {
		p.RequestState = res.RequestState
	}
	return p
}

// TestParkedCallAnswerReplayed: a 2026-07-28 client's answer to a
// parked call sent twice at once (a replay, or a retry of a request
// whose response was lost): the call takes the answer once, one request
// gets the call's result and the other an error at once; neither hangs.
func TestParkedCallAnswerReplayed(t *testing.T) {
	a := newAsking()
	_, url := startGateway(t, []Server{{Name: "s", Target: a.srv}}, &Options{ParkTimeout: time.Minute})
	cs := connect(t, url, v0728, manualRounds)
	ctx := testCtx(t, 15*time.Second)
	for i := range 5 {
		who := fmt.Sprint("call", i)
		first, err := cs.CallTool(ctx, askParams(who, nil, nil))
		if err != nil || !first.NeedsInput() || len(first.InputRequests) != 1 {
			t.Fatalf("%s: first round: %v %+v", who, err, first)
		}
		type got struct {
			res *mcp.CallToolResult
			err error
		}
		ch := make(chan got, 2)
		for range 2 {
			go func() {
				res, err := cs.CallTool(ctx, askParams(who, first, nameAnswers(first, "ada")))
				ch <- got{res, err}
			}()
		}
		ok, refused := 0, 0
		for range 2 {
			g := <-ch
			switch {
			case g.err == nil && texts(g.res) == who+" got ada":
				ok++
			case g.err != nil && strings.Contains(g.err.Error(), "requestState"):
				refused++
			default:
				t.Errorf("%s: a retry got %q, %v", who, texts(g.res), g.err)
			}
		}
		if ok != 1 || refused != 1 {
			t.Errorf("%s: %d results and %d refusals, want 1 and 1", who, ok, refused)
		}
		if n := a.answers()[who+" got ada"]; n != 1 {
			t.Errorf("%s: the server received the answer %d times", who, n)
		}
	}
}

// TestParkedCallForeignAnswer: a 2026-07-28 client sends, with one
// parked call's request state, the answers to another call's question
// (keyed as that question was): they reach no call; the call's own
// question is asked again, and its own answer completes it.
func TestParkedCallForeignAnswer(t *testing.T) {
	a := newAsking()
	_, url := startGateway(t, []Server{{Name: "s", Target: a.srv}}, &Options{ParkTimeout: time.Minute})
	cs := connect(t, url, v0728, manualRounds)
	ctx := testCtx(t, 15*time.Second)
	x, err := cs.CallTool(ctx, askParams("x", nil, nil))
	if err != nil || !x.NeedsInput() {
		t.Fatalf("x: %v %+v", err, x)
	}
	xAnswers := nameAnswers(x, "mallory")
	if res, err := cs.CallTool(ctx, askParams("x", x, nameAnswers(x, "xavier"))); err != nil || texts(res) != "x got xavier" {
		t.Fatalf("x's answer: %q, %v", texts(res), err)
	}
	y, err := cs.CallTool(ctx, askParams("y", nil, nil))
	if err != nil || !y.NeedsInput() {
		t.Fatalf("y: %v %+v", err, y)
	}
	again, err := cs.CallTool(ctx, askParams("y", y, xAnswers))
	if err != nil || !again.NeedsInput() || texts(again) != "" {
		t.Fatalf("y's state with x's answers: %q, %v, %+v (want y's question again)", texts(again), err, again)
	}
	res, err := cs.CallTool(ctx, askParams("y", again, nameAnswers(again, "yvonne")))
	if err != nil || texts(res) != "y got yvonne" {
		t.Fatalf("y's own answer: %q, %v", texts(res), err)
	}
	if n := a.answers(); n["y got mallory"] != 0 || n["y got yvonne"] != 1 || n["x got xavier"] != 1 {
		t.Errorf("the server received %v", n)
	}
}

// TestParkedCallsManyAtOnce: many clients (2026-07-28 and 2025-11-25;
// go-sdk's with its multi-round-trip loop and this library's; of two
// principals) call the ask tool at once; each answer reaches its own call
// exactly once.
func TestParkedCallsManyAtOnce(t *testing.T) {
	a := newAsking()
	_, url := startForPrincipals(t, []Server{{Name: "s", Target: a.srv}}, &Options{Logger: quietLogger(t), ParkTimeout: time.Minute}, "alice", "bob")
	ctx := testCtx(t, 60*time.Second)
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		token, v := []string{"alice", "bob"}[i%2], []string{v0728, v1125}[i/2%2]
		who, name := fmt.Sprint("who", i), fmt.Sprint("name", i)
		elicit := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if !strings.Contains(req.Params.Message, who+"?") {
				return nil, fmt.Errorf("%s was asked %q", who, req.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		}
		hc := &http.Client{Transport: bearer{token}}
		var call func() (string, error)
		if i < n/2 { // go-sdk's client
			c := mcp.NewClient(&mcp.Implementation{Name: token}, &mcp.ClientOptions{ElicitationHandler: elicit})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			call = func() (string, error) {
				res, err := cs.CallTool(ctx, askParams(who, nil, nil))
				return texts(res), err
			}
		} else { // this library's
			c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Name: "gw", ProtocolVersion: map[string]string{v0728: "", v1125: v1125}[v],
				HTTPClient: hc, ElicitationHandler: elicit, Logger: quietLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			call = func() (string, error) {
				res, err := c.CallTool(ctx, "ask", json.RawMessage(`{"who":"`+who+`"}`), nil)
				if err != nil {
					return "", err
				}
				return res.Text(), nil
			}
		}
		go func() {
			got, err := call()
			if err == nil && got != who+" got "+name {
				err = fmt.Errorf("%s (%s, %s): %q", who, token, v, got)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got := a.answers()
	for i := range n {
		if s := fmt.Sprintf("who%d got name%d", i, i); got[s] != 1 {
			t.Errorf("%q received %d times", s, got[s])
		}
	}
	if len(got) != n {
		t.Errorf("the server received %v", got)
	}
}
