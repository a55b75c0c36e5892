package replicatest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSharedSessionsAnswerNotMixedStores: with sessions in Redis and
// PostgreSQL, two replicas each ask a question numbered 1 in one
// session; the answer to replica 1's question, sent to replica 0, is not
// given to replica 0's question; an answer sent to the replica that
// asked, when no other replica has a question with its id waiting,
// reaches it.
func TestSharedSessionsAnswerNotMixedStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			srv := mcp.NewServer(&mcp.Implementation{Name: "q"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
			for _, tool := range []string{"book", "delete_repo"} {
				mcp.AddTool(srv, &mcp.Tool{Name: tool}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
					ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
					defer cancel()
					res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "question of " + tool, RequestedSchema: map[string]any{"type": "object"}})
					if err != nil {
						return nil, nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s got %s %v", tool, res.Action, res.Content)}}}, nil, nil
				})
			}
			up := testserver.StartStreamable(t, srv)
			var urls []string
			for range 2 {
				g, err := gateway.New([]gateway.Server{{Name: "q", Target: up.URL}}, &gateway.Options{Logger: quietLimitLogger(), Sessions: &gateway.SessionOptions{Store: store}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = g.Close() })
				if err := g.Start(limitCtx(t, 30*time.Second)); err != nil {
					t.Fatal(err)
				}
				ts := httptest.NewServer(g)
				t.Cleanup(ts.Close)
				urls = append(urls, ts.URL+"/mcp")
			}
			post := func(u, body, session string) *http.Response {
				req, _ := http.NewRequestWithContext(limitCtx(t, 30*time.Second), http.MethodPost, u, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
					req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			stream := func(resp *http.Response) <-chan string {
				ch := make(chan string, 16)
				go func() {
					defer resp.Body.Close()
					sc := bufio.NewScanner(resp.Body)
					for sc.Scan() {
						if l := sc.Text(); strings.HasPrefix(l, "data: ") && len(l) > 6 {
							ch <- strings.TrimPrefix(l, "data: ")
						}
					}
					close(ch)
				}()
				return ch
			}
			next := func(ch <-chan string, what string) string {
				select {
				case l := <-ch:
					return l
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: nothing", what)
				}
				return ""
			}
			resp := post(urls[0], `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`, "")
			id := resp.Header.Get("Mcp-Session-Id")
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			post(urls[0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`, id).Body.Close()
			s1 := stream(post(urls[0], `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"delete_repo","arguments":{}}}`, id))
			t.Logf("replica 0 asks: %s", next(s1, "delete_repo's question"))
			s2 := stream(post(urls[1], `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"book","arguments":{}}}`, id))
			t.Logf("replica 1 asks: %s", next(s2, "book's question"))
			answer := func(u, content string) int {
				r := post(u, `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"for":"`+content+`"}}}`, id)
				_, _ = io.Copy(io.Discard, r.Body)
				r.Body.Close()
				return r.StatusCode
			}
			// The user accepts book's question; the balancer sends the
			// answer to replica 0.
			if code := answer(urls[0], "book"); code != http.StatusAccepted {
				t.Errorf("the answer's POST: %d, want 202", code)
			}
			select {
			case l := <-s1:
				t.Fatalf("delete_repo's call ended with an answer that was not for it: %s", l)
			case <-time.After(2 * time.Second):
			}
			// Both questions end by their timeout, unanswered.
			for _, s := range []<-chan string{s1, s2} {
				if l := next(s, "a call's end"); strings.Contains(l, " got ") {
					t.Fatalf("a call got an answer: %s", l)
				}
			}
			// One question, on replica 1, answered through replica 1.
			s3 := stream(post(urls[1], `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"book","arguments":{}}}`, id))
			q := next(s3, "book's second question")
			var qid string
			if i := strings.Index(q, `"id":`); i >= 0 {
				qid = q[i+5 : i+5+strings.IndexAny(q[i+5:], ",}")]
			}
			r := post(urls[1], `{"jsonrpc":"2.0","id":`+qid+`,"result":{"action":"accept","content":{"for":"book"}}}`, id)
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if l := next(s3, "book's result"); !strings.Contains(l, "book got accept map[for:book]") {
				t.Fatalf("book's result: %s", l)
			}
		})
	}
}
