package eino_test

// Reliability of the agent binding: failing tools never abort a run, and a
// cancelled run stops its MCP calls (the server is told) without leaving
// goroutines behind.

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// A run whose tools fail in every way a model can read (an error result, a
// server handler's error, arguments the server rejects, an unknown tool),
// mid-run and next to calls that succeed, goes on to the model's answer,
// which quotes each failure.
func TestSoakAgentToolFailuresNeverAbort(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ctx := ctx30(t)
			tools := adapterTools(t, testserver.New(testserver.Options{Era: era}), nil)
			a := newAgent(t, tools, nil,
				[]schema.ToolCall{call("c1", "echo", `{"text":"first"}`)},
				[]schema.ToolCall{
					call("c2", "fail", `{"message":"disk full"}`),
					call("c3", "add", `{"a":"not a number","b":1}`),
					call("c4", "echo", `{"text":"beside the failures"}`),
				},
				[]schema.ToolCall{call("c5", "fail_structured", `{}`), call("c6", "no_such_tool", `{}`)},
				[]schema.ToolCall{call("c7", "echo", `{"text":"last"}`)},
			)
			r := drain(t, a.Query(ctx, "cp", "go"))
			if r.err != nil {
				t.Fatalf("the run was aborted: %v", r.err)
			}
			for _, want := range []string{"echo: first", "fail: disk full", "add: ", "echo: beside the failures",
				"fail_structured: " + testserver.QuotaMessage, `no tool named "no_such_tool"`, "echo: last"} {
				if !strings.Contains(r.final, want) {
					t.Errorf("final answer lacks %q:\n%s", want, r.final)
				}
			}
			for _, name := range []string{"fail", "add", "fail_structured"} {
				if out := r.outputs[name]; out == nil || !out.IsError {
					t.Errorf("%s: output %+v, want an error result", name, out)
				}
			}
			if out := r.outputs["echo"]; out == nil || out.IsError {
				t.Errorf("echo: output %+v", out)
			}
		})
	}
}

// Cancelling a run's context while its tools run stops the MCP calls: the
// run ends promptly, the server sees every call cancelled, and no goroutine
// is left once the adapter is closed.
func TestSoakAgentCancelStopsCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		era  testserver.Era
		http []testserver.StreamableOption // nil: in-process
	}{
		{"in-process", testserver.Modern, nil},
		{"in-process-legacy", testserver.Legacy, nil},
		{"streamable-legacy", testserver.Legacy, []testserver.StreamableOption{}},
		// A stateless 2026-07-28 server learns of a cancellation from the
		// closed HTTP request, if it propagates it to the handler.
		{"streamable-stateless", testserver.Modern, []testserver.StreamableOption{testserver.Stateless(), testserver.PropagateCancellation()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, state := testserver.NewWithState(testserver.Options{Era: tc.era})
			var target any = srv
			if tc.http != nil {
				target = testserver.ServeStreamable(t, srv, tc.http...)
			}
			before := runtime.NumGoroutine()
			ad, err := mcpadapter.New(target, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ad.Close()
			lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
			tools, err := ad.Tools(lctx)
			lcancel()
			if err != nil {
				t.Fatal(err)
			}
			const n = 3
			var round []schema.ToolCall
			for i := range n {
				round = append(round, call("c"+string(rune('1'+i)), "slow", `{"ms":20000}`))
			}
			a := newAgent(t, tools, nil, round)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			it := a.Query(ctx, "cp", "go")
			wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer wcancel()
			if err := state.Wait(wctx, func(s *testserver.State) bool { return s.Calls("slow") == n }); err != nil {
				t.Fatalf("the server never got the %d calls: %v", n, err)
			}
			start := time.Now()
			cancel()
			done := make(chan run, 1)
			go func() { done <- drain(t, it) }()
			var r run
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the run did not end within 5 s of its cancellation")
			}
			t.Logf("run ended %v after the cancel: %v", time.Since(start).Round(10*time.Microsecond), r.err)
			if r.err == nil || !errors.Is(r.err, context.Canceled) {
				t.Errorf("run error %v, want one wrapping context.Canceled", r.err)
			}
			if err := state.Wait(wctx, func(s *testserver.State) bool { return s.Cancellations() == n }); err != nil {
				t.Errorf("the server saw %d of %d calls cancelled: %v", state.Cancellations(), n, err)
			}
			ad.Close()
			testenv.WaitGoroutines(t, before)
		})
	}
}
