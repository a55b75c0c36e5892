package eino_test

import (
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestAgentTaskInputResumeInNewRunner: a tool call that runs as a task
// (2026-07-28 Tasks extension) and needs the user's answer interrupts the
// run; the checkpoint carries the task's handle, so a new adapter and
// runner, as after a restart, resume it: the answer reaches the task,
// which is polled to its result, and the work ran once.
func TestAgentTaskInputResumeInNewRunner(t *testing.T) {
	ctx := ctx30(t)
	srv := taskserver.New(taskserver.Options{PollInterval: 20})
	t.Cleanup(srv.Close)
	url := testserver.ServeStreamable(t, srv.MCP, testserver.Stateless())
	store := eino.NewMemoryStore()
	opts := &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}
	round := []schema.ToolCall{call("c1", "ask", `{"stepMs":10}`)}
	first := newAgent(t, adapterTools(t, url, opts), store, round)
	r := drain(t, first.Query(ctx, "cp", "who am I"))
	if len(r.interrupts) != 1 || r.interrupts[0].Interrupt.Requests[0].Message != "What is your name?" {
		t.Fatalf("%v %+v", r.err, r.interrupts)
	}
	second := newAgent(t, adapterTools(t, url, opts), store, round)
	it, err := second.Resume(ctx, "cp", answerAll(r.interrupts))
	if err != nil {
		t.Fatal(err)
	}
	if r = drain(t, it); r.err != nil || !strings.Contains(r.final, "hello Ada (accept)") {
		t.Errorf("resumed in a new runner: %v %q", r.err, r.final)
	}
	if n := srv.Started("ask"); n != 1 {
		t.Errorf("the task's work started %d times", n)
	}
}
