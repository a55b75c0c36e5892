package toolcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/toolcall"
)

// call is a model's call in the tests: a tool name and its arguments.
type call struct {
	Name string
	Args string
}

// tools connects to a real go-sdk test server and returns its tools by
// name.
func tools(t *testing.T, era testserver.Era, opts *mcpadapter.Options) map[string]*mcpadapter.Tool {
	t.Helper()
	a, err := mcpadapter.New(testserver.New(testserver.Options{Era: era}), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcpadapter.Tool{}
	for _, tl := range list {
		byName[tl.Name] = tl
	}
	return byName
}

func caller(byName map[string]*mcpadapter.Tool) func(context.Context, call) (*mcpadapter.Result, error) {
	return func(ctx context.Context, c call) (*mcpadapter.Result, error) {
		tl, ok := byName[c.Name]
		if !ok {
			return toolcall.ErrorResult("unknown tool " + c.Name), nil
		}
		return tl.Call(ctx, json.RawMessage(c.Args))
	}
}

// TestRunTurn: one turn's calls come back in order, each as what it came
// to: a result, a tool error the model reads, a pending question. (On a
// handshake-era connection calls queued behind a parked question are
// pending too (park.go), so the question is asked in a turn of its own.)
func TestRunTurn(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Modern, testserver.Legacy} {
		t.Run(era.String(), func(t *testing.T) {
			byName := tools(t, era, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			calls := []call{
				{"echo", `{"text":"hi"}`},
				{"fail", `{"message":"boom"}`},
				{"slow", `{"ms":1}`},
				{"nope", `{}`},
				{"image", `{}`},
			}
			outs := toolcall.RunTurn(ctx, calls, 2, caller(byName))
			if len(outs) != len(calls) {
				t.Fatalf("%d outcomes for %d calls", len(outs), len(calls))
			}
			for i, o := range outs {
				if o.Call != calls[i] {
					t.Errorf("outcome %d is for %+v, want %+v", i, o.Call, calls[i])
				}
				if o.Err != nil {
					t.Errorf("outcome %d: transport failure %v", i, o.Err)
				}
			}
			if r := outs[0].Result; r == nil || r.IsError || r.Text() != "hi" {
				t.Errorf("echo: %+v", r)
			}
			if r := outs[1].Result; r == nil || !r.IsError || toolcall.ContentText(r.Content[0]) != "boom" {
				t.Errorf("fail: %+v (outcome %+v)", r, outs[1])
			}
			if r := outs[2].Result; r == nil || r.IsError {
				t.Errorf("slow: %+v", outs[2])
			}
			if r := outs[3].Result; r == nil || !r.IsError || r.Text() != "unknown tool nope" {
				t.Errorf("nope: %+v", r)
			}
			if r := outs[4].Result; r == nil || len(r.Content) != 1 || toolcall.ContentText(r.Content[0]) == "" {
				t.Errorf("image: %+v (outcome %+v)", r, outs[4])
			}
			if err := toolcall.Failures(outs, wrap); err != nil {
				t.Errorf("Failures = %v, want nil", err)
			}
			outs = toolcall.RunTurn(ctx, []call{{"book", `{"date":"Fri"}`}}, 2, caller(byName))
			if p := outs[0].Pending; p == nil || len(p.Requests) != 1 || outs[0].Result != nil || outs[0].Err != nil {
				t.Errorf("book: %+v, want a pending question", outs[0])
			}
		})
	}
}

func wrap(c call, err error) error { return &callError{c, err} }

type callError struct {
	c   call
	err error
}

func (e *callError) Error() string { return e.c.Name + ": " + e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// TestRunTurnBound: no more than limit calls run at once, and all of them
// run.
func TestRunTurnBound(t *testing.T) {
	byName := tools(t, testserver.Modern, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	running, most := 0, 0
	call0 := caller(byName)
	counted := func(ctx context.Context, c call) (*mcpadapter.Result, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		return call0(ctx, c)
	}
	calls := make([]call, 8)
	for i := range calls {
		calls[i] = call{"slow", `{"ms":20}`}
	}
	outs := toolcall.RunTurn(ctx, calls, 3, counted)
	for i, o := range outs {
		if o.Result == nil || o.Result.IsError {
			t.Errorf("call %d: %+v", i, o)
		}
	}
	if most > 3 || most < 1 {
		t.Errorf("%d calls ran at once, want 1 to 3", most)
	}
}

// TestRunTurnCanceled: with the context done, no call is sent and every
// outcome is a transport failure; Failures names each call.
func TestRunTurnCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var mu sync.Mutex
	sent := 0
	// Only calls that win the race against ctx.Done reach here; they
	// return the context's error as Tool.Call does.
	outs := toolcall.RunTurn(ctx, []call{{"a", ""}, {"b", ""}}, 1,
		func(ctx context.Context, _ call) (*mcpadapter.Result, error) {
			mu.Lock()
			sent++
			mu.Unlock()
			return nil, ctx.Err()
		})
	for _, o := range outs {
		if !errors.Is(o.Err, context.Canceled) || o.Result != nil || o.Pending != nil {
			t.Errorf("outcome %+v, want Err context.Canceled", o)
		}
	}
	err := toolcall.Failures(outs, wrap)
	var ce *callError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Failures = %v, want callErrors wrapping context.Canceled", err)
	}
	if got := err.Error(); got != "a: context canceled\nb: context canceled" {
		t.Errorf("Failures = %q", got)
	}
	if sent > 2 {
		t.Errorf("%d calls sent", sent)
	}
}

// TestSettle: a transport failure and a pending question are told apart
// from a result.
func TestSettle(t *testing.T) {
	pending := &mcpadapter.PendingCall{}
	ire := &mcpadapter.InputRequiredError{Pending: pending}
	if o := toolcall.Settle(1, nil, ire); o.Pending != pending || o.Err != nil || o.Result != nil {
		t.Errorf("InputRequiredError: %+v", o)
	}
	boom := errors.New("boom")
	if o := toolcall.Settle(2, &mcpadapter.Result{}, boom); o.Err != boom || o.Result != nil || o.Call != 2 {
		t.Errorf("error: %+v", o)
	}
	res := toolcall.ErrorResult("bad")
	if o := toolcall.Settle(3, res, nil); o.Result != res || o.Err != nil || o.Pending != nil {
		t.Errorf("result: %+v", o)
	}
}

func TestContentText(t *testing.T) {
	for _, tc := range []struct {
		c    mcpadapter.Content
		want string
	}{
		{&mcpadapter.TextContent{Text: "hi"}, "hi"},
		{&mcpadapter.ImageContent{MIMEType: "image/png", Data: []byte("abc")}, "[image image/png, 3 bytes]"},
		{&mcpadapter.AudioContent{MIMEType: "audio/wav", Data: []byte("ab")}, "[audio audio/wav, 2 bytes]"},
		{&mcpadapter.ResourceLinkContent{Name: "r", URI: "file:///r"}, "[resource r file:///r]"},
		{&mcpadapter.EmbeddedResourceContent{URI: "file:///e", Text: "body"}, "body"},
		{&mcpadapter.EmbeddedResourceContent{URI: "file:///e", Blob: []byte("x")}, "[resource file:///e, 1 bytes]"},
		{nil, ""},
	} {
		if got := toolcall.ContentText(tc.c); got != tc.want {
			t.Errorf("ContentText(%T) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestOutcomeText: what the model reads for each kind of outcome, and
// whether it reads it as an error.
func TestOutcomeText(t *testing.T) {
	res := &mcpadapter.Result{Content: []mcpadapter.Content{
		&mcpadapter.TextContent{Text: "a"}, &mcpadapter.ImageContent{MIMEType: "image/png", Data: []byte("xy")}}}
	for _, tc := range []struct {
		o       toolcall.Outcome[int]
		text    string
		isError bool
	}{
		{toolcall.Outcome[int]{Result: res}, "a\n[image image/png, 2 bytes]", false},
		{toolcall.Outcome[int]{Result: toolcall.ErrorResult("bad")}, "bad", true},
		{toolcall.Outcome[int]{Pending: &mcpadapter.PendingCall{}}, "the tool is waiting for the user's answer", true},
		{toolcall.Outcome[int]{Err: errors.New("eof")}, "the tool could not be reached: eof", true},
		{toolcall.Outcome[int]{}, "", false},
	} {
		if got := tc.o.Text(); got != tc.text {
			t.Errorf("%+v: Text = %q, want %q", tc.o, got, tc.text)
		}
		if got := tc.o.IsError(); got != tc.isError {
			t.Errorf("%+v: IsError = %t, want %t", tc.o, got, tc.isError)
		}
	}
}
