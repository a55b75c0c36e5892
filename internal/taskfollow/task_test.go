package taskfollow

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// server answers a Task's requests from answers, by method, and counts
// them.
type server struct {
	answers map[string]string
	errs    map[string]error
	sent    []string
}

func (s *server) task(ext bool) *Task {
	return &Task{ID: "t1", Tool: "slow", Ext: ext, Log: slog.New(slog.DiscardHandler),
		Request: func(ctx context.Context, method string, _ time.Duration) (json.RawMessage, error) {
			s.sent = append(s.sent, method)
			if err := s.errs[method]; err != nil {
				return nil, err
			}
			return json.RawMessage(s.answers[method]), nil
		}}
}

// TestTaskGet: another task's state, or an unreadable one, is a
// *LostError; the request's own failure is returned as it is.
func TestTaskGet(t *testing.T) {
	ctx := context.Background()
	s := &server{answers: map[string]string{"tasks/get": `{"taskId":"t1","status":"working"}`}}
	if st, err := s.task(false).Get(ctx); err != nil || st.Status != "working" {
		t.Fatalf("Get: %+v, %v", st, err)
	}
	s.answers["tasks/get"] = `{"taskId":"t2","status":"completed"}`
	var lost *LostError
	if _, err := s.task(false).Get(ctx); !errors.As(err, &lost) || !strings.Contains(err.Error(), `"t2"`) {
		t.Fatalf("another task: %v", err)
	}
	s.answers["tasks/get"] = `[`
	if _, err := s.task(false).Get(ctx); !errors.As(err, &lost) || lost.Op != "tasks/get" {
		t.Fatalf("unreadable: %v", err)
	}
	down := errors.New("down")
	s.errs = map[string]error{"tasks/get": down}
	if _, err := s.task(false).Get(ctx); err != down {
		t.Fatalf("failed request: %v", err)
	}
}

// TestTaskOutcome: a 2026-07-28 task's result is in its state, or its
// failure is the model's refusal; a 2025-11-25 task's comes from
// tasks/result, whose server error for a failed task is a refusal, and
// whose failure with the call's context ended cancels the task.
func TestTaskOutcome(t *testing.T) {
	ctx := context.Background()
	s := &server{}
	raw, refusal, err := s.task(true).Outcome(ctx, &taskwire.State{TaskID: "t1", Status: "completed", Result: json.RawMessage(`{"content":[]}`)})
	if err != nil || refusal != "" || string(raw) != `{"content":[]}` || len(s.sent) != 0 {
		t.Fatalf("extension: %s %q %v %v", raw, refusal, err, s.sent)
	}
	if _, refusal, _ := s.task(true).Outcome(ctx, &taskwire.State{TaskID: "t1", Status: "failed"}); refusal != `Tool "slow" failed: the task failed` {
		t.Fatalf("failed without a result: %q", refusal)
	}
	var lost *LostError
	if _, _, err := s.task(true).Outcome(ctx, &taskwire.State{TaskID: "t1", Status: "completed"}); !errors.As(err, &lost) {
		t.Fatalf("completed without a result: %v", err)
	}
	s.errs = map[string]error{"tasks/result": &jsonrpc.Error{Code: -32603, Message: "boom"}}
	if _, refusal, _ := s.task(false).Outcome(ctx, &taskwire.State{TaskID: "t1", Status: "failed"}); !strings.Contains(refusal, "boom (MCP error -32603)") {
		t.Fatalf("core, failed: %q", refusal)
	}
	if _, _, err := s.task(false).Outcome(ctx, &taskwire.State{TaskID: "t1", Status: "completed"}); !errors.As(err, &lost) || lost.Op != "tasks/result" {
		t.Fatalf("core, tasks/result refused: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s.sent = nil
	var ce *CancelError
	if _, _, err := s.task(false).Outcome(cctx, &taskwire.State{TaskID: "t1", Status: "working"}); !errors.As(err, &ce) || !ce.Requested || !ce.Confirmed || !errors.Is(err, context.Canceled) {
		t.Fatalf("context ended: %v", err)
	}
	if strings.Join(s.sent, " ") != "tasks/result tasks/cancel" {
		t.Fatalf("sent %v", s.sent)
	}
}

// TestTaskAbandon: the task is cancelled and the call's result says why;
// a cancel that fails is a *CancelError that says so.
func TestTaskAbandon(t *testing.T) {
	ctx := context.Background()
	s := &server{}
	refusal, err := s.task(true).Abandon(ctx, errors.New("no handler"))
	if err != nil || !strings.Contains(refusal, "no handler. Its task was cancelled.") || s.sent[0] != "tasks/cancel" {
		t.Fatalf("abandon: %q, %v, %v", refusal, err, s.sent)
	}
	s.errs = map[string]error{"tasks/cancel": errors.New("gone")}
	var ce *CancelError
	if _, err := s.task(true).Abandon(ctx, errors.New("no handler")); !errors.As(err, &ce) || ce.Confirmed || ce.CancelErr == nil {
		t.Fatalf("cancel failed: %v", err)
	}
	if err := s.task(true).Ended(ctx, "tasks/update", errors.New("x")); !errors.As(err, new(*LostError)) {
		t.Fatalf("Ended: %v", err)
	}
}
