package gateway_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// TestExchangeTaskCall: a tool call a client makes as a task, which the
// gateway runs in the background after it has answered the request,
// reaches a server whose credential is per principal with a token
// exchanged for the principal who made the task. (A 2026-07-28 client
// gets the gateway's task only from a server with tasks: its call is
// checked all the same.)
func TestExchangeTaskCall(t *testing.T) {
	e := startXchg(t, nil, nil)
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := mcpadapter.NewClient(e.url, &mcpadapter.ClientOptions{Name: "gw", ProtocolVersion: v,
				Auth:  mcpadapter.BearerToken(e.token(t, "alice")),
				Tasks: &mcpadapter.TaskOptions{Mode: mcpadapter.TaskPrefer, MinPoll: 10 * time.Millisecond, MaxPoll: 100 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			if _, err := c.Tools(ctx); err != nil { // learns each tool's taskSupport
				t.Fatal(err)
			}
			var task *mcpadapter.TaskHandle
			res, err := c.CallTool(ctx, "up_whoami", json.RawMessage(`{}`), &mcpadapter.CallOptions{OnTask: func(h mcpadapter.TaskHandle) { task = &h }})
			if err != nil {
				t.Fatal(err)
			}
			if task == nil && v == "2025-11-25" {
				t.Fatal("the call made no task")
			}
			if res.IsError {
				t.Fatalf("the task's call failed: %s", res.Text())
			}
			if u := e.userOf(t, res.Text()); u != "alice" {
				t.Errorf("alice's task reached the server as %q", u)
			}
		})
	}
}
