package mcpadapter_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
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
