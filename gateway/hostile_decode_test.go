package gateway

import (
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayHostileNullQuestion: a server behind the gateway answers
// prompts/get, resources/read, tools/call and its task's tasks/result
// with a question that is null, on which go-sdk's decoding panics. Each
// client request fails (an error, or a tool error), and the gateway goes
// on serving its clients of both eras: it does not crash.
func TestGatewayHostileNullQuestion(t *testing.T) {
	bad := testserver.NullQuestionResult
	up := testserver.StartRawHTTP(t, map[string]string{"prompts/get": bad, "resources/read": bad, "tools/call t": bad, "tasks/result": bad})
	_, url := startGateway(t, []Server{{Name: "up", Target: up.URL}}, nil)
	for _, v := range []string{v1125, v0728} {
		cs := connect(t, url, v, nil)
		ctx := testCtx(t, 30*time.Second)
		if res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"}); err == nil {
			t.Errorf("%s: prompts/get answered %+v", v, res)
		}
		if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r"}); err == nil {
			t.Errorf("%s: resources/read answered %+v", v, res)
		}
		for _, tool := range []string{"t", "task"} {
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool}); err == nil && !res.IsError {
				t.Errorf("%s: tools/call %s answered %+v", v, tool, res)
			}
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("%s: the gateway stopped serving: %v", v, err)
		}
	}
	// A task the gateway runs in the background for a client.
	r := newRawRPC(t, url, v1125, "", `{}`)
	id := r.startTask("task", `{}`)
	r.waitStatus(id, "failed")
}
