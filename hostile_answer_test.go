package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nullQuestion is a 2026-07-28 server's answer to a call whose question
// is null: go-sdk's decoding of it panics.
const nullQuestion = `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"inputRequests":{"q":null}}}`

// TestHostileNullQuestion: a 2026-07-28 server answers a call with a
// question that is null. The call fails with an error that says the
// answer cannot be read, on the fast path and on go-sdk's, over HTTP (in
// an event stream and as JSON) and stdio; the server gets the call once;
// the next call works.
func TestHostileNullQuestion(t *testing.T) {
	t.Parallel()
	const want = "answer to tools/call cannot be read"
	for _, jsonResponse := range []bool{false, true} {
		p := newHTTPDiffPair(t, testserver.Modern, jsonResponse)
		asJSON, asSSE := answerScripts(nullQuestion)
		s := asSSE
		if jsonResponse {
			s = asJSON
		}
		fast, sdk := p.call(t, s)
		for side, o := range map[string]httpOutcome{"fast": fast, "go-sdk": sdk} {
			if !strings.Contains(o.call.err, want) || o.posts != 1 || !strings.Contains(o.after, `"Text":"after"`) || !strings.HasSuffix(o.after, `(error "")`) {
				t.Errorf("http (json %v), %s path: error %q, %d POSTs, then echo %q", jsonResponse, side, o.call.err, o.posts, o.after)
			}
		}
	}
	for _, disable := range []bool{false, true} {
		ctx := testCtx(t)
		c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", testserver.Modern.String()}}, &mcpadapter.ClientOptions{
			Logger: quietLogger(), Timeout: 10 * time.Second, DisableFastPath: disable,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		echoOK(t, ctx, c, "first") // teaches the fast path go-sdk's _meta
		_, err = c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(nullQuestion), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("stdio (fast path off: %v): %v", disable, err)
		}
		echoOK(t, ctx, c, "after")
	}
}

// TestHostileSamplingNullMessage: a handshake-era server asks a client
// that has a SamplingHandler for sampling with a message that is null,
// on which go-sdk's conversion for a sampling handler panics. The
// server's request is answered with an error naming the null message,
// the program goes on, and the call ends.
func TestHostileSamplingNullMessage(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hostileServer(testserver.Legacy)
	mcp.AddTool(srv, &mcp.Tool{Name: "think"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		//lint:ignore SA1019 sampling lives in the handshake era
		_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{nil}})
		if err == nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refused: " + err.Error()}}}, nil, nil
	})
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{
		Logger: quietLogger(),
		//lint:ignore SA1019 sampling lives in the handshake era
		SamplingHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			//lint:ignore SA1019 sampling lives in the handshake era
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for i := range 2 { // the connection goes on
		res, err := c.CallTool(ctx, "think", json.RawMessage(`{}`), nil)
		if err != nil || !strings.Contains(res.Text(), "refused: ") || !strings.Contains(res.Text(), "null message (messages[0])") {
			t.Fatalf("call %d: %+v %v", i, res, err)
		}
	}
}

// TestHostileRootsHandlerPanic: the application's RootsHandler panics on
// a handshake-era server's roots/list. The server's request is answered
// with an error, the program goes on, and the call ends.
func TestHostileRootsHandlerPanic(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hostileServer(testserver.Legacy)
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		//lint:ignore SA1019 roots live in the handshake era
		_, err := req.Session.ListRoots(ctx, nil)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("listed: ", err)}}}, nil, nil
	})
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{
		Logger: quietLogger(),
		//lint:ignore SA1019 roots live in the handshake era
		RootsHandler: func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
			panic("the application's handler failed")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for i := range 2 { // the connection goes on
		res, err := c.CallTool(ctx, "roots", json.RawMessage(`{}`), nil)
		if err != nil || !strings.Contains(res.Text(), "failed handling roots/list") {
			t.Fatalf("call %d: %+v %v", i, res, err)
		}
	}
}
