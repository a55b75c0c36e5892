package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamKinds are the servers behind the gateway in the era tests: a
// 2026-07-28 server (stateless HTTP) and a handshake-only one (HTTP with
// sessions, and in-process).
func upstreamKinds(t *testing.T) map[string]Server {
	modern := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "modern"}), testserver.Stateless())
	legacy := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "legacy", Era: testserver.Legacy}))
	return map[string]Server{
		"modern-http":      {Name: "up", Target: modern.URL},
		"legacy-http":      {Name: "up", Target: legacy.URL},
		"legacy-inprocess": {Name: "up", Target: testserver.New(testserver.Options{Name: "legacy-ip", Era: testserver.Legacy})},
	}
}

// TestEveryVersionEveryServer: clients of 2025-06-18, 2025-11-25 and
// 2026-07-28 call through the gateway to servers of either era; a call,
// its progress, and a question the server asks mid-call (answered by the
// client) all work in every combination.
func TestEveryVersionEveryServer(t *testing.T) {
	for kind, srv := range upstreamKinds(t) {
		_, url := startGateway(t, []Server{srv}, nil)
		for _, v := range clientVersions {
			t.Run(kind+"/"+v, func(t *testing.T) {
				ctx := testCtx(t, 30*time.Second)
				var mu sync.Mutex
				var progress []float64
				var asked []string
				cs := connect(t, url, v, &mcp.ClientOptions{
					ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
						mu.Lock()
						defer mu.Unlock()
						if r.Params.ProgressToken == "my-token" {
							progress = append(progress, r.Params.Progress)
						}
					},
					ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						asked = append(asked, r.Params.Message)
						mu.Unlock()
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 3, "seating": "terrace"}}, nil
					},
				})
				if got := cs.InitializeResult().ProtocolVersion; got != v {
					t.Fatalf("negotiated %s, want %s", got, v)
				}
				names := toolNames(t, cs)
				if !contains(names, "echo") || !contains(names, "book") {
					t.Fatalf("tools/list: %v", names)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi " + v}})
				if err != nil || texts(res) != "hi "+v {
					t.Fatalf("echo: %v, %v", texts(res), err)
				}

				p := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
				p.SetProgressToken("my-token")
				res, err = cs.CallTool(ctx, p)
				if err != nil || texts(res) != "done" {
					t.Fatalf("progress: %v, %v", texts(res), err)
				}
				mu.Lock()
				n := len(progress)
				mu.Unlock()
				if n != 3 {
					t.Errorf("progress notifications with the client's token: %d, want 3 (%v)", n, progress)
				}

				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "friday"}})
				if err != nil {
					t.Fatalf("book: %v", err)
				}
				if got := texts(res); got != "Booked 3 guests (terrace) on friday" {
					t.Errorf("book: %q", got)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 1 || !strings.Contains(asked[0], "friday") {
					t.Errorf("the client was asked %q, want one question about friday", asked)
				}
			})
		}
	}
}

// TestTwoRoundsEveryVersion: the survey tool asks two questions in two
// rounds (two input_required results from a 2026-07-28 server, two
// elicitation/create requests from a handshake-era one); every client
// answers both and gets the result.
func TestTwoRoundsEveryVersion(t *testing.T) {
	for kind, srv := range upstreamKinds(t) {
		_, url := startGateway(t, []Server{srv}, nil)
		for _, v := range clientVersions {
			t.Run(kind+"/"+v, func(t *testing.T) {
				ctx := testCtx(t, 30*time.Second)
				var mu sync.Mutex
				n := 0
				cs := connect(t, url, v, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						n++
						mu.Unlock()
						if strings.Contains(fmt.Sprint(r.Params.RequestedSchema), "name") {
							return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
						}
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
					},
				})
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "survey", Arguments: map[string]any{}})
				if err != nil {
					t.Fatalf("survey: %v", err)
				}
				if got := texts(res); !strings.Contains(got, "Ada") {
					t.Errorf("survey: %q", got)
				}
				mu.Lock()
				defer mu.Unlock()
				if n != 2 {
					t.Errorf("questions asked: %d, want 2", n)
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
