package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHostileNullQuestionPromptResource: a server answers prompts/get and
// resources/read with a question that is null. Each fails with an error
// saying the answer cannot be read (nothing panics), the server got each
// request once, and the client goes on.
func TestHostileNullQuestionPromptResource(t *testing.T) {
	t.Parallel()
	srv := testserver.StartRawHTTP(t, map[string]string{"prompts/get": testserver.NullQuestionResult, "resources/read": testserver.NullQuestionResult})
	c, err := mcpadapter.NewClient(srv.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := testCtx(t)
	const want = "cannot be read"
	if _, err := c.GetPrompt(ctx, "p", nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("prompts/get: %v; want an error saying %q", err, want)
	}
	if _, err := c.ReadResource(ctx, "test://r"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("resources/read: %v; want an error saying %q", err, want)
	}
	if n, m := srv.Count("prompts/get"), srv.Count("resources/read"); n != 1 || m != 1 {
		t.Errorf("the server got prompts/get %d times, resources/read %d times; want once each", n, m)
	}
	res, err := c.CallTool(ctx, "t", json.RawMessage(`{}`), nil)
	if err != nil || res.Text() != "plain" {
		t.Errorf("the next call: %v %v", res, err)
	}
}

// TestHostileTaskNullQuestion: a 2025-11-25 server's task ends with a
// result (tasks/result) asking a question that is null. The call fails
// with an error saying the result cannot be read; nothing panics.
func TestHostileTaskNullQuestion(t *testing.T) {
	t.Parallel()
	srv := testserver.StartRawHTTP(t, map[string]string{"tasks/result": testserver.NullQuestionResult})
	c, err := mcpadapter.NewClient(srv.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	res, err := c.CallTool(testCtx(t), "task", json.RawMessage(`{}`), nil)
	if err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("task call: %+v %v; want an error saying the result cannot be read", res, err)
	}
	if n := srv.Count("tasks/result"); n != 1 {
		t.Errorf("tasks/result asked %d times; want 1", n)
	}
}

// roundServer is a 2026-07-28 server whose tool "think" answers its first
// call with the question q (an inputRequests entry as sent), and each
// later one with "answered".
func roundServer(q string) *mcp.Server {
	srv := hostileServer(testserver.Modern)
	var asked atomic.Int32
	mcp.AddTool(srv, &mcp.Tool{Name: "think"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		if asked.Add(1) > 1 {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil, nil
		}
		var m mcp.InputRequestMap
		if err := json.Unmarshal([]byte(`{"q":`+q+`}`), &m); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{InputRequests: m, RequestState: "again"}, nil, nil
	})
	return srv
}

// TestHostileRoundSamplingNullMessage: a 2026-07-28 server answers a
// plain call (go-sdk's multi-round-trip loop answers its questions) with
// a sampling question whose messages include a null, in-process and over
// HTTP. go-sdk's loop answers questions on goroutines of its own, where
// its conversion for a SamplingHandler dereferenced the null message and
// ended the program. The call ends with an error, the SamplingHandler is
// not called, and the client goes on.
func TestHostileRoundSamplingNullMessage(t *testing.T) {
	t.Parallel()
	for _, overHTTP := range []bool{false, true} {
		srv := roundServer(`{"method":"sampling/createMessage","params":{"maxTokens":10,"messages":[{"role":"user","content":{"type":"text","text":"hi"}},null]}}`)
		var target any = srv
		if overHTTP {
			target = testserver.StartStreamable(t, srv).URL
		}
		var sampled atomic.Int32
		c, err := mcpadapter.NewClient(target, &mcpadapter.ClientOptions{Logger: quietLogger(),
			//lint:ignore SA1019 servers may still ask for sampling in a round
			SamplingHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				sampled.Add(1)
				//lint:ignore SA1019 servers may still ask for sampling in a round
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		ctx := testCtx(t)
		res, err := c.CallTool(ctx, "think", json.RawMessage(`{}`), nil)
		if err == nil && !res.IsError {
			t.Errorf("http %v: the call succeeded on a malformed sampling question: %+v", overHTTP, res)
		}
		said := fmt.Sprint(err)
		if res != nil {
			said += " " + res.Text()
		}
		if !strings.Contains(said, "null message (messages[1])") {
			t.Errorf("http %v: the call ended with %q; want it to name the null message", overHTTP, said)
		}
		if n := sampled.Load(); n != 0 {
			t.Errorf("http %v: the SamplingHandler was called %d times with a malformed question", overHTTP, n)
		}
		if res, err := c.CallTool(ctx, "think", json.RawMessage(`{}`), nil); err != nil || res.Text() != "answered" {
			t.Errorf("http %v: the next call: %+v %v", overHTTP, res, err)
		}
	}
}

// TestHostileRoundHandlerPanic: the application's ElicitationHandler
// panics on a server's question (a form without a schema, say) that
// go-sdk's multi-round-trip loop hands it on a goroutine of its own. The
// call ends with an error; the program goes on.
func TestHostileRoundHandlerPanic(t *testing.T) {
	t.Parallel()
	srv := roundServer(`{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}`)
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Logger: quietLogger(),
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			panic("the application's handler failed")
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	res, err := c.CallTool(testCtx(t), "think", json.RawMessage(`{}`), nil)
	if err == nil && !res.IsError {
		t.Errorf("the call succeeded although its question's handler panicked: %+v", res)
	}
}
