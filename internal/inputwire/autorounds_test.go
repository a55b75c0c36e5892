//lint:file-ignore SA1019 sampling and roots, deprecated in 2026-07-28, may still be asked for in a round, which we support

package inputwire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roundServer is a go-sdk server whose tool "ask", prompt "p" and
// resource "r://x" ask the question of rounds(n) in their n-th round (1:
// the first answer) until rounds returns nil; then they answer with what
// they were last answered (answered).
type roundServer struct {
	srv    *mcp.Server
	calls  atomic.Int32
	rounds func(n int, got mcp.InputResponseMap, state string) (mcp.InputRequestMap, string)
	last   atomic.Pointer[string] // the last answers and state, as text
}

func newRoundServer(rounds func(n int, got mcp.InputResponseMap, state string) (mcp.InputRequestMap, string)) *roundServer {
	rs := &roundServer{srv: mcp.NewServer(&mcp.Implementation{Name: "rounds", Version: "1"}, nil), rounds: rounds}
	step := func(got mcp.InputResponseMap, state string) (mcp.InputRequestMap, string, string) {
		n := int(rs.calls.Add(1))
		text := describeAnswers(got) + " state=" + state
		rs.last.Store(&text)
		reqs, next := rs.rounds(n, got, state)
		return reqs, next, text
	}
	mcp.AddTool(rs.srv, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		reqs, next, text := step(req.Params.InputResponses, req.Params.RequestState)
		if reqs != nil {
			return &mcp.CallToolResult{InputRequests: reqs, RequestState: next}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	rs.srv.AddPrompt(&mcp.Prompt{Name: "p"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		reqs, next, text := step(req.Params.InputResponses, req.Params.RequestState)
		if reqs != nil {
			return &mcp.GetPromptResult{InputRequests: reqs, RequestState: next}, nil
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
	})
	rs.srv.AddResource(&mcp.Resource{URI: "r://x", Name: "x"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		reqs, next, text := step(req.Params.InputResponses, req.Params.RequestState)
		if reqs != nil {
			return &mcp.ReadResourceResult{InputRequests: reqs, RequestState: next}, nil
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "r://x", Text: text}}}, nil
	})
	return rs
}

// describeAnswers is a round's answers as text, in key order.
func describeAnswers(m mcp.InputResponseMap) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		switch v := m[k].(type) {
		case *mcp.ElicitResult:
			fmt.Fprintf(&b, "%s:%s%v ", k, v.Action, v.Content)
		case *mcp.CreateMessageWithToolsResult:
			fmt.Fprintf(&b, "%s:sampled(%s) ", k, v.Model)
		case *mcp.ListRootsResult:
			fmt.Fprintf(&b, "%s:roots(%d) ", k, len(v.Roots))
		default:
			fmt.Fprintf(&b, "%s:%T ", k, v)
		}
	}
	return strings.TrimSpace(b.String())
}

// connect returns a client session of a to rs.srv, over in-memory
// transports, with go-sdk's own loop off.
func connect(t *testing.T, rs *roundServer, a AutoRounds) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := rs.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	c.AddSendingMiddleware(a.Middleware)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

var nameForm = map[string]any{"type": "object", "properties": map[string]any{
	"name": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer", "default": 7}}, "required": []any{"name"}}

// TestAutoRoundsAnswers: each kind of question a round asks (a form, a
// sampling request, roots) is answered by the client's own handler, the
// request is sent again with the answers and the server's state, round
// after round, for tools/call, prompts/get and resources/read; the
// elicitation handler gets the session and the answer the schema's
// defaults; the caller's params are left as they were.
func TestAutoRoundsAnswers(t *testing.T) {
	rs := newRoundServer(func(n int, _ mcp.InputResponseMap, _ string) (mcp.InputRequestMap, string) {
		switch n % 3 {
		case 1:
			return mcp.InputRequestMap{"b": &mcp.ElicitParams{Message: "Name?", RequestedSchema: nameForm},
				"a": &mcp.CreateMessageWithToolsParams{MaxTokens: 5, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}}}, fmt.Sprint("s", n)
		case 2:
			return mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}, fmt.Sprint("s", n)
		}
		return nil, ""
	})
	var order []string
	var noSession atomic.Int32
	cs := connect(t, rs, AutoRounds{
		Elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			order = append(order, "elicit")
			if req.Session == nil {
				noSession.Add(1)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		},
		Sampling: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			order = append(order, "sample")
			if req.Session == nil {
				noSession.Add(1)
			}
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
		Roots: []*mcp.Root{{URI: "file:///a"}},
	})
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "r:roots(1) state=s2" {
		t.Errorf("tools/call: %q", got)
	}
	if params.InputResponses != nil || params.RequestState != "" {
		t.Errorf("the caller's params were changed: %+v", params)
	}
	if got := strings.Join(order, ","); got != "sample,elicit" {
		t.Errorf("questions answered in the order %s, want sample,elicit (key order)", got)
	}
	if n := noSession.Load(); n != 0 {
		t.Errorf("a handler was given no session %d times", n)
	}
	// The second round's answers, seen by the server on the third call:
	// check the first round's too, with a server that stops after it.
	rs.rounds = func(n int, _ mcp.InputResponseMap, _ string) (mcp.InputRequestMap, string) {
		if n%2 == 1 {
			return mcp.InputRequestMap{"b": &mcp.ElicitParams{Message: "Name?", RequestedSchema: nameForm}}, "first"
		}
		return nil, ""
	}
	rs.calls.Store(0)
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	if got := *rs.last.Load(); got != "b:acceptmap[n:7 name:Ann] state=first" {
		t.Errorf("the server got %q", got)
	}
	rs.calls.Store(0)
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"})
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "b:acceptmap[n:7 name:Ann] state=first" {
		t.Errorf("prompts/get: %+v, %v", pr, err)
	}
	rs.calls.Store(0)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "r://x"})
	if err != nil || rr.Contents[0].Text != "b:acceptmap[n:7 name:Ann] state=first" {
		t.Errorf("resources/read: %+v, %v", rr, err)
	}
}

// TestAutoRoundsBounds: a server that asks forever is answered
// MaxAutoRounds times, one that sheds load forever is sent the request
// MaxShed+1 times; either call then fails, saying why; a context that
// ends while the call waits to be sent again ends it at once.
func TestAutoRoundsBounds(t *testing.T) {
	ctx := context.Background()
	rs := newRoundServer(func(int, mcp.InputResponseMap, string) (mcp.InputRequestMap, string) {
		return mcp.InputRequestMap{"q": &mcp.ListRootsParams{}}, "again"
	})
	cs := connect(t, rs, AutoRounds{})
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "rounds without answering") {
		t.Errorf("a server that asks forever: %v", err)
	}
	if n := rs.calls.Load(); n != MaxAutoRounds+1 {
		t.Errorf("the server was sent the call %d times, want %d", n, MaxAutoRounds+1)
	}

	rs.rounds = func(int, mcp.InputResponseMap, string) (mcp.InputRequestMap, string) {
		return mcp.InputRequestMap{}, ""
	}
	rs.calls.Store(0)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "load shedding") {
		t.Errorf("a server that sheds load forever: %v", err)
	}
	if n := rs.calls.Load(); n != MaxShed+1 {
		t.Errorf("the shed call was sent %d times, want %d", n, MaxShed+1)
	}

	cctx, cancel := context.WithCancelCause(ctx)
	cause := errors.New("the user left")
	rs.calls.Store(0)
	timer := time.AfterFunc(ShedWait(1)/4, func() { cancel(cause) })
	defer timer.Stop()
	start := time.Now()
	_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if !errors.Is(err, cause) || time.Since(start) >= ShedWait(1) || rs.calls.Load() != 1 {
		t.Errorf("a context ended while the call waits: %v after %v, %d calls; want its cause at once, after 1 call", err, time.Since(start), rs.calls.Load())
	}
}

// TestAutoRoundsHandlerFailures: a handler that fails, panics or returns
// no result fails the call with an error naming the question, and the
// request is not sent again; a client without a handler answers as
// go-sdk's does ("does not support elicitation").
func TestAutoRoundsHandlerFailures(t *testing.T) {
	ctx := context.Background()
	ask := func(int, mcp.InputResponseMap, string) (mcp.InputRequestMap, string) {
		return mcp.InputRequestMap{"k": &mcp.ElicitParams{Message: "Name?", RequestedSchema: nameForm}}, "s"
	}
	for name, c := range map[string]struct {
		elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
		want   string
	}{
		"none": {nil, "client does not support elicitation"},
		"error": {func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("no user")
		}, "no user"},
		"panic": {func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { panic("boom") }, "the client failed handling"},
		"nil":   {func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil }, "returned no result"},
		"misfit": {func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": 3}}, nil
		}, "does not fit the requested schema"},
		"unknown": {func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"x": "y"}}, nil
		}, "does not fit the requested schema"},
	} {
		t.Run(name, func(t *testing.T) {
			rs := newRoundServer(ask)
			cs := connect(t, rs, AutoRounds{Elicit: c.elicit})
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `question "k"`) {
				t.Errorf("error %v; want one naming the question k and saying %q", err, c.want)
			}
			if n := rs.calls.Load(); n != 1 {
				t.Errorf("the call was sent %d times, want 1", n)
			}
			var delivered *sdkerr.DeliveredError
			if !errors.As(err, &delivered) {
				t.Errorf("error %v after the server answered a round: not marked delivered", err)
			}
		})
	}
	// Sampling without a handler, and other methods, untouched.
	rs := newRoundServer(func(int, mcp.InputResponseMap, string) (mcp.InputRequestMap, string) {
		return mcp.InputRequestMap{"s": &mcp.CreateMessageWithToolsParams{MaxTokens: 1}}, ""
	})
	cs := connect(t, rs, AutoRounds{})
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "no SamplingHandler") {
		t.Errorf("sampling without a handler: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list through the loop: %v", err)
	}
}

// TestElicit: the checks of a round's or a task's elicitation, as
// go-sdk makes them for a server's elicitation/create, and the URL a
// user may be sent to a web page only.
func TestElicit(t *testing.T) {
	ctx := context.Background()
	var asked int
	accept := func(content map[string]any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		}
	}
	for _, c := range []struct {
		name    string
		p       *mcp.ElicitParams
		h       func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
		want    string // error text; "" for none
		asks    bool   // the handler is asked
		content string // the answer's content, printed
	}{
		{"no handler", &mcp.ElicitParams{Message: "?"}, nil, "client does not support elicitation", false, ""},
		{"form with a URL", &mcp.ElicitParams{Mode: "form", URL: "https://x.test"}, accept(nil), "URL must not be set", false, ""},
		{"no mode with a URL", &mcp.ElicitParams{URL: "https://x.test"}, accept(nil), "URL must not be set", false, ""},
		{"url without URL", &mcp.ElicitParams{Mode: "url"}, accept(nil), "URL must be set", false, ""},
		{"url with a schema", &mcp.ElicitParams{Mode: "url", URL: "https://x.test", RequestedSchema: nameForm}, accept(nil), "requestedSchema must not be set", false, ""},
		{"javascript URL", &mcp.ElicitParams{Mode: "url", URL: "javascript:alert(1)"}, accept(nil), `"javascript" URL`, false, ""},
		{"file URL", &mcp.ElicitParams{Mode: "url", URL: "file:///etc/passwd"}, accept(nil), `"file" URL`, false, ""},
		{"other mode", &mcp.ElicitParams{Mode: "voice"}, accept(nil), "unsupported elicitation mode", false, ""},
		{"nested form", &mcp.ElicitParams{RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{"type": "string"}}}}}},
			accept(nil), "nested properties", false, ""},
		{"web page", &mcp.ElicitParams{Mode: "url", URL: "https://x.test/a"}, accept(nil), "", true, "map[]"},
		{"defaults", &mcp.ElicitParams{RequestedSchema: nameForm}, accept(map[string]any{"name": "Ann"}), "", true, "map[n:7 name:Ann]"},
		{"missing field", &mcp.ElicitParams{RequestedSchema: nameForm}, accept(map[string]any{"n": 1}), "does not fit", true, ""},
		{"no schema", &mcp.ElicitParams{}, accept(map[string]any{"any": true}), "", true, "map[any:true]"},
		{"decline", &mcp.ElicitParams{RequestedSchema: nameForm}, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "decline"}, nil
		}, "", true, "map[]"},
		{"no result", &mcp.ElicitParams{}, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { asked++; return nil, nil }, "returned no result", true, ""},
	} {
		asked = 0
		res, err := Elicit(ctx, c.h, nil, "k", c.p)
		var rpc *jsonrpc.Error
		switch {
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &rpc)):
			t.Errorf("%s: %v; want a JSON-RPC error saying %q", c.name, err, c.want)
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && fmt.Sprint(res.Content) != c.content:
			t.Errorf("%s: content %v, want %s", c.name, res.Content, c.content)
		}
		if (asked > 0) != c.asks {
			t.Errorf("%s: the handler asked %d times, want asked %v", c.name, asked, c.asks)
		}
	}
	// The handler's result is not changed by the defaults filled in.
	mine := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}
	res, err := Elicit(ctx, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return mine, nil }, nil, "k", &mcp.ElicitParams{RequestedSchema: nameForm})
	if err != nil || len(mine.Content) != 1 || len(res.Content) != 2 {
		t.Errorf("the handler's result: %v, %v -> %v", mine.Content, err, res)
	}
}
