//lint:file-ignore SA1019 the tests relay a handshake-era server's roots and sampling requests, deprecated in 2026-07-28 but alive in the handshake era

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sampler is a handshake-era server whose tools ask the client of the
// call mid-call, with the call's tag WHO: "sample" for a completion of
// "for WHO" (sampling/createMessage), "sample_tools" for one with a tool
// offered, "roots" for its roots (roots/list). Each answers "WHO: " and
// what it got, and records "TOOL WHO: " and what it got (got).
type sampler struct {
	srv *mcp.Server
	mu  sync.Mutex
	got []string
}

func newSampler() *sampler {
	s := &sampler{srv: mcp.NewServer(&mcp.Implementation{Name: "sampler"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})}
	in := json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)
	who := func(req *mcp.CallToolRequest) string {
		var a struct{ Who string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a.Who
	}
	answer := func(tool, w, got string) *mcp.CallToolResult {
		s.mu.Lock()
		s.got = append(s.got, tool+" "+w+": "+got)
		s.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: w + ": " + got}}}
	}
	s.srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: in}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		w := who(req)
		r, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "for " + w}}}})
		if err != nil {
			return nil, err
		}
		return answer("sample", w, r.Content.(*mcp.TextContent).Text), nil
	})
	s.srv.AddTool(&mcp.Tool{Name: "sample_tools", InputSchema: in}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		w := who(req)
		r, err := req.Session.CreateMessageWithTools(ctx, &mcp.CreateMessageWithToolsParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "for " + w}}}},
			Tools:    []*mcp.Tool{{Name: "lookup", InputSchema: map[string]any{"type": "object"}}}})
		if err != nil {
			return nil, err
		}
		var texts []string
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return answer("sample_tools", w, strings.Join(texts, "|")), nil
	})
	s.srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: in}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		w := who(req)
		r, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return answer("roots", w, strings.Join(uris, ",")), nil
	})
	return s
}

func (s *sampler) answers() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int)
	for _, g := range s.got {
		out[g]++
	}
	return out
}

// TestPoolSamplingAndRootsNeverCrossPrincipals: 4 principals with 3
// handshake-era sessions each (each session has roots of its own and a
// model that answers for it, sampling with and without tools) call, all
// at once, a handshake-era server over streamable HTTP whose calls ask
// for a completion (with and without tools) and for the roots mid-call;
// the calls run on the shared connection and the extra ones. Each
// session is asked only its own calls' questions, each call gets its own
// session's roots and model's answer, and the server receives each once.
func TestPoolSamplingAndRootsNeverCrossPrincipals(t *testing.T) {
	s := newSampler()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil))
	t.Cleanup(up.Close)
	who := []string{"alice", "bob", "carol", "dave"}
	g, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{}, who...)
	ctx := testCtx(t, 90*time.Second)
	var mu sync.Mutex
	var crossed []string
	cross := func(format string, args ...any) {
		mu.Lock()
		crossed = append(crossed, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	results := make(chan string, 64)
	tools := []string{"sample", "sample_tools", "roots"}
	for _, p := range who {
		for i := range 3 {
			tag := fmt.Sprintf("%s#%d", p, i)
			model := func(q string) string {
				if q != "for "+tag {
					cross("%s was asked for a completion of %q", tag, q)
				}
				time.Sleep(20 * time.Millisecond) // questions of several calls overlap
				return tag + "'s model"
			}
			c := mcp.NewClient(&mcp.Implementation{Name: tag}, &mcp.ClientOptions{
				CreateMessageWithToolsHandler: func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
					q := ""
					if m := req.Params.Messages; len(m) > 0 && len(m[0].Content) > 0 {
						if tc, ok := m[0].Content[0].(*mcp.TextContent); ok {
							q = tc.Text
						}
					}
					return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: tag, Content: []mcp.Content{&mcp.TextContent{Text: model(q)}}}, nil
				},
			})
			c.AddRoots(&mcp.Root{URI: "file:///home/" + tag})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{p}}}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
			if err != nil {
				t.Fatalf("%s connecting: %v", tag, err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			for _, tool := range tools {
				wg.Go(func() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"who": tag}})
					switch {
					case err != nil:
						results <- fmt.Sprintf("%s %s: %v", tag, tool, err)
					case res.IsError:
						results <- fmt.Sprintf("%s %s: error result %s", tag, tool, texts(res))
					default:
						results <- tool + " " + texts(res)
					}
				})
			}
		}
	}
	wg.Wait()
	close(results)
	t.Logf("%d extra connections after %d calls at once", g.servers()[0].pool.size(), len(who)*3*len(tools))
	want := func(tool, tag string) string {
		if tool == "roots" {
			return fmt.Sprintf("%s %s: file:///home/%s", tool, tag, tag)
		}
		return fmt.Sprintf("%s %s: %s's model", tool, tag, tag)
	}
	got := make(map[string]bool)
	for r := range results {
		got[r] = true
	}
	answers := s.answers()
	for _, p := range who {
		for i := range 3 {
			tag := fmt.Sprintf("%s#%d", p, i)
			for _, tool := range tools {
				if w := want(tool, tag); !got[w] {
					t.Errorf("no result %q", w)
				}
				if n := answers[want(tool, tag)]; n != 1 {
					t.Errorf("the server received %s's %s answer %d times, want once", tag, tool, n)
				}
			}
		}
	}
	for r := range got {
		if tool, rest, _ := strings.Cut(r, " "); !strings.HasPrefix(rest, "") || want(tool, strings.SplitN(rest, ":", 2)[0]) != r {
			t.Errorf("a result not its call's own: %s", r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range crossed {
		t.Error(c)
	}
}

// TestPoolOneSessionsCallsAskAtOnce: one handshake-era session (roots
// and a model that takes a while to answer) makes 8 calls at once to a
// handshake-era server whose calls ask for a completion (with and
// without tools) or the roots mid-call. The calls of one session share
// their connection, and a question of one may reach the client on
// another's request: every call still gets its answer, none fails
// because the request its question went with ended first.
func TestPoolOneSessionsCallsAskAtOnce(t *testing.T) {
	s := newSampler()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil))
	t.Cleanup(up.Close)
	_, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{}, "alice")
	ctx := testCtx(t, 60*time.Second)
	c := mcp.NewClient(&mcp.Implementation{Name: "alice"}, &mcp.ClientOptions{
		CreateMessageWithToolsHandler: func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			time.Sleep(30 * time.Millisecond)
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "alice's model"}}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///home/alice"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"alice"}}}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	for round := range 3 {
		var wg sync.WaitGroup
		for i := range 8 {
			tool := []string{"sample", "sample_tools", "roots", "sample"}[i%4]
			wg.Go(func() {
				tag := fmt.Sprintf("%d.%d", round, i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"who": tag}})
				want := tag + ": alice's model"
				if tool == "roots" {
					want = tag + ": file:///home/alice"
				}
				if err != nil || res.IsError || texts(res) != want {
					t.Errorf("call %s (%s): %v %q, want %q", tag, tool, err, texts(res), want)
				}
			})
		}
		wg.Wait()
	}
}

// TestPoolRootsListChangedStaysWithItsClient: alice's session changes
// its roots (notifications/roots/list_changed) while bob's call, which
// asks for the roots only after a while, is in flight on the shared
// connection of a handshake-era server that asks for the roots again
// whenever told they changed. The gateway does not pass a client's
// roots/list_changed on to a connection shared by others (the server
// would ask outside any call of alice's), so the server asks no one
// outside a call, and bob's call gets bob's roots.
func TestPoolRootsListChangedStaysWithItsClient(t *testing.T) {
	var mu sync.Mutex
	var outside []string
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	srv := mcp.NewServer(&mcp.Implementation{Name: "roots"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions,
		RootsListChangedHandler: func(_ context.Context, req *mcp.RootsListChangedRequest) {
			ss := req.Session
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				r, err := ss.ListRoots(ctx, nil)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					outside = append(outside, "error: "+err.Error())
					return
				}
				for _, root := range r.Roots {
					outside = append(outside, root.URI)
				}
				if len(r.Roots) == 0 {
					outside = append(outside, "(none)")
				}
			})
		}})
	srv.AddTool(&mcp.Tool{Name: "slow_roots", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		time.Sleep(500 * time.Millisecond)
		r, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, ",")}}}, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	_, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{}, "alice", "bob")
	ctx := testCtx(t, 30*time.Second)
	client := func(who string) (*mcp.Client, *mcp.ClientSession) {
		c := mcp.NewClient(&mcp.Implementation{Name: who}, nil)
		c.AddRoots(&mcp.Root{URI: "file:///home/" + who})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{who}}}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return c, cs
	}
	alice, _ := client("alice")
	_, bob := client("bob")
	done := make(chan string, 1)
	go func() {
		res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow_roots", Arguments: map[string]any{}})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- texts(res)
	}()
	time.Sleep(100 * time.Millisecond) // bob's call is in flight
	alice.AddRoots(&mcp.Root{URI: "file:///home/alice/new"})
	if got := <-done; got != "file:///home/bob" {
		t.Errorf("bob's call got the roots %q, want his own", got)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(outside) > 0 {
		t.Errorf("the server asked for roots outside a call and got %v", outside)
	}
}
