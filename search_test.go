package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// definitions is what a model is sent of tools: names, descriptions,
// input schemas.
func definitions(t *testing.T, tools []*mcpadapter.Tool) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, tl := range tools {
		if err := json.NewEncoder(&b).Encode([]any{tl.Name, tl.Description, tl.InputSchema}); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// TestToolSearchPair drives search_tools and call_tool against a server
// whose list changes: the pair's definitions stay byte for byte the same,
// the index follows the server, and mistakes are results the model reads.
func TestToolSearchPair(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := mcpadapter.New(testserver.New(testserver.Options{Mutable: true}), &mcpadapter.Options{
		WatchTools: true, ToolSearch: &mcpadapter.ToolSearch{Threshold: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	pair, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := definitions(t, pair)
	search, call := pair[0], pair[1]
	if search.Name != "search_tools" || call.Name != "call_tool" || len(pair) != 2 {
		t.Fatalf("Tools: %d tools, want search_tools and call_tool", len(pair))
	}
	do := func(tl *mcpadapter.Tool, args string) *mcpadapter.Result {
		t.Helper()
		res, err := tl.Call(ctx, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s %s: %v", tl.Name, args, err)
		}
		return res
	}

	res := do(search, `{"query":"echo the text back","limit":3}`)
	var found struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.Text()), &found); err != nil || res.IsError {
		t.Fatalf("search_tools: %q: %v", res.Text(), err)
	}
	if len(found.Tools) == 0 || len(found.Tools) > 3 || found.Tools[0].Name != "echo" || !bytes.Contains(found.Tools[0].InputSchema, []byte(`"text"`)) {
		t.Fatalf("search_tools: %s, want echo first with its schema, at most 3", res.Text())
	}
	if strings.Contains(res.Text(), `"note"`) {
		t.Errorf("search_tools: a fitting query got a note: %s", res.Text())
	}
	// Nothing fits: the closest tools come with a note that says so.
	if res := do(search, `{"query":"book a flight from Paris to Tokyo"}`); !strings.Contains(res.Text(), `"note":"No tool fits this well`) {
		t.Errorf("search_tools for what no tool does: %s, want the no-fit note", res.Text())
	}
	if res := do(call, `{"name":"echo","arguments":{"text":"hi"}}`); res.IsError || res.Text() != "hi" {
		t.Fatalf("call_tool echo: %v %q", res.IsError, res.Text())
	}

	// The server adds a tool: the next search finds it.
	do(call, `{"name":"tool_add","arguments":{"name":"zebra_stripes","description":"Count the stripes of a zebra."}}`)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(do(search, `{"query":"how many stripes has a zebra"}`).Text(), "zebra_stripes") {
		if time.Now().After(deadline) {
			t.Fatal("search_tools never found the tool the server added")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res := do(call, `{"name":"zebra_stripes","arguments":{}}`); res.IsError || res.Text() != "zebra_stripes: {}" {
		t.Fatalf("call_tool zebra_stripes: %v %q", res.IsError, res.Text())
	}
	// It removes it: a call gets a result that says so.
	v := a.ToolsVersion()
	do(call, `{"name":"tool_remove","arguments":{"name":"zebra_stripes"}}`)
	waitVersion(t, a, v)
	if res := do(call, `{"name":"zebra_stripes","arguments":{}}`); !res.IsError || !strings.HasPrefix(res.Text(), `Tool "zebra_stripes" was removed by server "in-process"`) {
		t.Fatalf("call_tool of a removed tool: %v %q", res.IsError, res.Text())
	}

	for args, want := range map[string]string{
		`{"name":"ecko","arguments":{}}`:   `call_tool: there is no tool named "ecko"; use search_tools to find one`,
		`{"name":5}`:                       "call_tool: arguments are not a JSON object of the right shape",
		`{"name":"echo","arguments":[1]}`:  `call_tool: "arguments" for "echo" must be a JSON object`,
		`{"name":"search_tools"}`:          "call_tool: call search_tools directly",
		`{"name":"echo","arguments":{"x"}`: "call_tool: arguments are not a JSON object",
	} {
		if res := do(call, args); !res.IsError || !strings.HasPrefix(res.Text(), want) {
			t.Errorf("call_tool %s: %v %q, want an error result starting %q", args, res.IsError, res.Text(), want)
		}
	}
	if res := do(search, `{}`); !res.IsError || !strings.Contains(res.Text(), `"query" is empty`) {
		t.Errorf("search_tools {}: %v %q", res.IsError, res.Text())
	}
	// The count is the test server's (it grows as tests add tools).
	noMatch := regexp.MustCompile(`^No tool matches "qwertyuiop"; try other words\. The catalog has [1-9][0-9] tools from in-process\.`)
	if res := do(search, `{"query":"qwertyuiop"}`); res.IsError || !noMatch.MatchString(res.Text()) {
		t.Errorf("search_tools with no match: %v %q", res.IsError, res.Text())
	}

	again, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(definitions(t, again), first) {
		t.Fatalf("the pair's definitions changed between turns:\n%s\n%s", first, definitions(t, again))
	}
}

// TestToolSearchThreshold: a catalog under the threshold is handed over
// whole; the default threshold is documented in tokens.
func TestToolSearchThreshold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := mcpadapter.New(testserver.New(testserver.Options{}), &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := mcpadapter.EstimateTokens(tools); len(tools) < 10 || n > mcpadapter.DefaultToolSearchThreshold {
		t.Fatalf("%d tools of %d tokens: want the whole catalog under the default threshold %d", len(tools), n, mcpadapter.DefaultToolSearchThreshold)
	}
	// Over a threshold of 100 tokens, the pair.
	a2, err := mcpadapter.New(testserver.New(testserver.Options{}), &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: 100}})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	if tools, err := a2.Tools(ctx); err != nil || len(tools) != 2 {
		t.Fatalf("Tools over the threshold: %d tools, %v; want the pair", len(tools), err)
	}
	hits, err := a2.Search(ctx, "add two numbers", 1)
	if err != nil || len(hits) != 1 || hits[0].Tool.Name != "add" || hits[0].Score <= 0 {
		t.Fatalf("Search: %+v, %v", hits, err)
	}
	if res, err := hits[0].Tool.Call(ctx, json.RawMessage(`{"a":1,"b":2}`)); err != nil || res.IsError {
		t.Fatalf("calling a found tool: %v %v", res, err)
	}
}

// TestToolSearchMaxAge: with no change notifications (WatchTools off),
// the catalog follows the server once its listing is older than MaxAge,
// and not before.
func TestToolSearchMaxAge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := testserver.New(testserver.Options{Mutable: true})
	adapter := func(maxAge time.Duration) (*mcpadapter.Adapter, []*mcpadapter.Tool) {
		a, err := mcpadapter.New(srv, &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1, MaxAge: maxAge}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		pair, err := a.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return a, pair
	}
	quick, pair := adapter(time.Millisecond)
	slow, _ := adapter(time.Hour)
	if _, err := pair[1].Call(ctx, json.RawMessage(`{"name":"tool_add","arguments":{"name":"zebra_stripes","description":"Count the stripes of a zebra."}}`)); err != nil {
		t.Fatal(err)
	}
	if hits, _ := slow.Search(ctx, "zebra stripes", 1); len(hits) != 0 {
		t.Fatalf("found %q within MaxAge, with no notification", hits[0].Tool.Name)
	}
	time.Sleep(2 * time.Millisecond)
	if hits, err := quick.Search(ctx, "zebra stripes", 1); err != nil || len(hits) != 1 || hits[0].Tool.Name != "zebra_stripes" {
		t.Fatalf("after MaxAge: %v, %v", hits, err)
	}
}
