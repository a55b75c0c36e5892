package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLostHTTPSessionKeepsCallsInFlight: a request over streamable HTTP
// finds go-sdk's connection closing, failed by another request's news (a
// 404 to a request made on go-sdk's session directly, as the gateway's
// logging/setLevel), before go-sdk says the session ended. The session
// is given up and the request goes on a new one, but a tools/call in
// flight on the old one is not cancelled by that news: it gets its own
// answer, and the server runs the tool once.
func TestLostHTTPSessionKeepsCallsInFlight(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var runs atomic.Int32
	started, release := make(chan struct{}, 1), make(chan struct{})
	srv := testserver.New(testserver.Options{Era: testserver.Legacy})
	mcp.AddTool(srv, &mcp.Tool{Name: "gate"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		runs.Add(1)
		started <- struct{}{}
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	e := New(Config{
		Name: "s", Kind: Streamable, URL: hs.URL, FastPath: true,
		SDK:            mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil),
		Observer:       wire.NewObserver("s", slog.New(slog.NewTextHandler(io.Discard, nil))),
		ConnectTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
	})
	defer e.Close()
	s, err := e.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answer := make(chan error, 1)
	go func() {
		answer <- e.Send(ctx, Request{Op: "tools/call", Tool: "gate"}, func(ctx context.Context, s *Session) error {
			res, _, err := s.CallTool(ctx, Call{Params: &mcp.CallToolParams{Name: "gate", Arguments: json.RawMessage(`{}`)}})
			if err == nil && (len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "done") {
				err = fmt.Errorf("answered %+v", res.Content)
			}
			return err
		})
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("gate never ran")
	}
	// go-sdk's error for a request on a connection it is closing
	// (sdkerr.TestSDKErrorWording pins "client is closing").
	closing := fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/list",
		errors.New(`client is closing: sending "logging/setLevel": failed to connect (session ID: X): session not found`))
	if retry, err := e.failed(ctx, s, Request{Op: "tools/list"}, closing, false); !retry {
		t.Errorf("a request refused by a closing connection is not sent again: %v", err)
	}
	if next, err := e.Session(ctx); err != nil || next == s {
		t.Errorf("the next request's session is %p (%v), the lost one %p", next, err, s)
	}
	close(release)
	select {
	case err := <-answer:
		if err != nil {
			t.Errorf("the call in flight on the lost session: %v; want its answer", err)
		}
	case <-ctx.Done():
		t.Fatal("the call in flight never returned")
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the server ran gate %d times, want 1", n)
	}
}
