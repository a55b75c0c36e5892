package mcpadapter_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSharedConnectionQuestionIsNotTheOpeners: on a handshake-era
// connection every principal shares (in-process; stdio is alike), alice's
// call opens the connection, then bob's call asks a question: the
// question reaches the application with no identity (a server request
// says not which call asked), never with alice's.
func TestSharedConnectionQuestionIsNotTheOpeners(t *testing.T) {
	srv := hitltest.NewServer(testserver.Legacy)
	var (
		mu  sync.Mutex
		got []string
	)
	c, err := mcpadapter.NewClient(srv.Server, &mcpadapter.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			p := "<none>"
			if id := mcpadapter.CallIdentityFrom(ctx); id != nil {
				p = id.Principal
			}
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.CallTool(as(ctx, "alice"), "echo", json.RawMessage(`{"text":"hello"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(as(ctx, "bob"), "ask", json.RawMessage(askArgs("b", 1)), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("bob's question never reached the application")
	}
	for _, p := range got {
		if p == "alice" {
			t.Errorf("bob's question reached the application as alice's (%v)", got)
		}
	}
}
