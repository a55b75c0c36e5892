package mcpadapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bookingServer is a go-sdk server with one tool whose schema constrains
// its arguments; it counts the calls that reach it.
func bookingServer(calls *atomic.Int32) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "booking", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "book_room", Description: "Book a meeting room.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"room":{"type":"string","minLength":1},
			"people":{"type":"integer","minimum":1,"maximum":20},
			"slots":{"type":"array","items":{"type":"object","properties":{"start":{"type":"string","pattern":"^[0-2][0-9]:[0-5][0-9]$"}},"required":["start"]}}},
			"required":["room","people"],"additionalProperties":false}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "booked"}}}, nil
		})
	return srv
}

func TestArgumentsCheckedBeforeTheCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var calls atomic.Int32
	a, err := mcpadapter.New(bookingServer(&calls), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tools[0].Call(ctx, json.RawMessage(`{"people":50,"slots":[{"start":"9am"},{}],"floor":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || calls.Load() != 0 {
		t.Fatalf("invalid call: IsError=%v, server calls=%d; want an error result and no call", res.IsError, calls.Load())
	}
	want := `Invalid arguments for tool "book_room"; the call was not made.
- $.room: required, missing
- $.people: expected a number <= 20, got 50
- $.slots[0].start: expected a string matching the pattern ^[0-2][0-9]:[0-5][0-9]$, got a string ("9am")
- $.slots[1].start: required, missing
- $.floor: unexpected property; the allowed properties are room, people, slots
Fix these and call the tool again.`
	if got := res.Text(); got != want {
		t.Fatalf("message:\n%s\nwant:\n%s", got, want)
	}
	res, err = tools[0].Call(ctx, json.RawMessage(`{"room":"Ada","people":4,"slots":[{"start":"09:30"}]}`))
	if err != nil || res.IsError || calls.Load() != 1 {
		t.Fatalf("valid call: %v %v, server calls=%d", res, err, calls.Load())
	}
}

func TestArgumentCheckOffPerTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, st := range []*mcpadapter.ServerTransform{
		{SkipArgumentCheck: true},
		{Tools: map[string]*mcpadapter.ToolTransform{"book_room": {SkipArgumentCheck: true}}},
	} {
		var calls atomic.Int32
		a, err := mcpadapter.New(bookingServer(&calls), &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{"in-process": st}})
		if err != nil {
			t.Fatal(err)
		}
		tools, err := a.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tools[0].Call(ctx, json.RawMessage(`{"people":50}`)); err != nil {
			t.Fatal(err)
		}
		a.Close()
		if calls.Load() != 1 {
			t.Fatalf("%+v: the unchecked call did not reach the server", st)
		}
	}
}

// TestArgumentCheckRenamedArgument: a problem names the argument as the
// model knows it (ArgTransform.Name), not the server's name.
func TestArgumentCheckRenamedArgument(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var calls atomic.Int32
	a, err := mcpadapter.New(bookingServer(&calls), &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{"in-process": {
		Tools: map[string]*mcpadapter.ToolTransform{"book_room": {Arguments: map[string]*mcpadapter.ArgTransform{"people": {Name: "attendees"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tools[0].Call(ctx, json.RawMessage(`{"room":"Ada","attendees":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "$.attendees: expected a number >= 1, got 0") || calls.Load() != 0 {
		t.Fatalf("got %q (server calls %d)", res.Text(), calls.Load())
	}
}
