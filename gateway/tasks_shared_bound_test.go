package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSharedTasksRecordBound: a task's record whose status message, error
// or question is huge (a hostile server's), besides a result near its
// bound, is written so that every replica can read it: each huge text is
// cut, saying so; a record still too large is written as failed with an
// error saying why; a client's huge answer is refused, and the record
// before it stays. Never a record the readers refuse (they would answer
// "store unavailable" until it expires).
func TestSharedTasksRecordBound(t *testing.T) {
	huge := strings.Repeat("x", 2*maxTaskRecord)
	half := huge[:maxTaskRecord/2]
	text := strings.Repeat("r", maxTaskRecord-100)
	result, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	isCut := func(s string) bool { return len(s) < 8<<10 && strings.Contains(s, "(cut: ") }
	cases := []struct {
		name string
		set  func(*taskRecord)
		ok   func(r *taskRecord, werr error) bool
	}{
		{"message", func(r *taskRecord) { r.Message = huge },
			func(r *taskRecord, werr error) bool { return werr == nil && r.Status == stWorking && isCut(r.Message) }},
		{"error", func(r *taskRecord) { r.Status, r.Error = stFailed, &jsonrpc.Error{Code: -32000, Message: huge} },
			func(r *taskRecord, werr error) bool {
				return werr == nil && r.Status == stFailed && r.Error.Code == -32000 && isCut(r.Error.Message)
			}},
		{"error data", func(r *taskRecord) {
			r.Status, r.Error = stFailed, &jsonrpc.Error{Code: -32000, Message: "bad", Data: json.RawMessage(`"` + huge + `"`)}
		}, func(r *taskRecord, werr error) bool {
			return werr == nil && r.Error.Message == "bad" && r.Error.Data == nil
		}},
		{"question", func(r *taskRecord) {
			r.Status, r.Asks = "input_required", map[string]*mcp.ElicitParams{"q": {Message: huge}}
		}, func(r *taskRecord, werr error) bool {
			return werr == nil && r.Status == "input_required" && r.Asks["q"] != nil && isCut(r.Asks["q"].Message)
		}},
		{"questions", func(r *taskRecord) {
			r.Status, r.Asks = "input_required", map[string]*mcp.ElicitParams{"q1": {Message: half}, "q2": {Message: half}, "q3": {Message: half}}
		}, func(r *taskRecord, werr error) bool {
			return werr == nil && len(r.Asks) == 3 && isCut(r.Asks["q3"].Message)
		}},
		{"result and message", func(r *taskRecord) { r.Status, r.Result, r.Message = stCompleted, result, half },
			func(r *taskRecord, werr error) bool {
				return werr == nil && r.Status == stCompleted && strings.Contains(string(r.Result), text) && isCut(r.Message)
			}},
		{"question schema", func(r *taskRecord) {
			r.Status, r.Asks = "input_required", map[string]*mcp.ElicitParams{"q": {Message: "?", RequestedSchema: map[string]any{"description": huge}}}
		}, func(r *taskRecord, werr error) bool {
			return werr == nil && r.Status == stFailed && r.Asks == nil && !r.Expires.IsZero() &&
				strings.Contains(r.Error.Message, "over the") && r.Message == r.Error.Message
		}},
		{"answers", func(r *taskRecord) { r.Answers = map[string]json.RawMessage{"q": json.RawMessage(`"` + huge + `"`)} },
			func(r *taskRecord, werr error) bool {
				return werr != nil && strings.Contains(werr.Error(), "answers") && r.Status == stWorking && r.Answers == nil
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sh := newSharedTasks(&TaskOptions{Store: &MemoryTaskStore{}})
			ctx := context.Background()
			rec := &taskRecord{Principal: "alice", Server: "plain", Tool: "slow", Replica: sh.replica, Created: time.Now(), TTLMs: 60000, Status: stWorking}
			if err := sh.writeTask(ctx, "t1", rec); err != nil {
				t.Fatal(err)
			}
			tc.set(rec)
			werr := sh.writeTask(ctx, "t1", rec)
			got, err := sh.loadTask(ctx, "t1")
			if err != nil {
				t.Fatalf("the record written (writeTask: %v) cannot be read: %v", werr, err)
			}
			if !tc.ok(got, werr) {
				t.Fatalf("writeTask: %v; the record read: status %s, message %.100q, error %.200v, %d questions", werr, got.Status, got.Message, got.Error, len(got.Asks))
			}
		})
	}
}

// TestSharedTasksRecordBoundRunner: a question too large for the task's
// record fails the task in the record; the replica running it sees that
// on its sync, ends the call, and shows the task failed with the error
// saying why (not failed without an error).
func TestSharedTasksRecordBoundRunner(t *testing.T) {
	sh := newSharedTasks(&TaskOptions{Store: &MemoryTaskStore{}})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	task := &gwTask{id: "t1", principal: "alice", server: "plain", tool: "slow", created: time.Now(), ttl: time.Minute,
		cancel: cancel, shared: sh, status: stWorking, wake: make(chan struct{})}
	if err := sh.started(ctx, task, nil); err != nil {
		t.Fatal(err)
	}
	task.asks = []*taskQuestion{{key: "q1", params: &mcp.ElicitParams{Message: "?", RequestedSchema: map[string]any{"description": strings.Repeat("x", 2*maxTaskRecord)}}}}
	task.status = "input_required"
	if err := sh.sync(ctx, task); err != nil {
		t.Fatal(err)
	}
	if err := sh.sync(ctx, task); err != nil { // the next beat
		t.Fatal(err)
	}
	status, _, _, _, terr, _, _ := task.snapshot()
	if status != stFailed || terr == nil || !strings.Contains(terr.Message, "over the") {
		t.Fatalf("the running replica's task: %s, error %v", status, terr)
	}
	if ctx.Err() == nil {
		t.Fatal("the call was not ended")
	}
}
