package ui_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// planSchema is a tool schema with what a form must handle: nested
// objects, arrays of strings and of objects, an enum with a default,
// formats, a oneOf, required fields.
const planSchema = `{"type":"object","properties":{
 "title":{"type":"string","description":"A title","default":"untitled"},
 "when":{"type":"string","format":"date"},
 "contact":{"type":"string","format":"email"},
 "priority":{"type":"string","enum":["low","normal","high"],"default":"normal"},
 "owner":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name"]},
 "tags":{"type":"array","items":{"type":"string"}},
 "steps":{"type":"array","items":{"type":"object","properties":{"action":{"type":"string"},"repeat":{"type":"integer"}},"required":["action"]}},
 "target":{"oneOf":[{"title":"by id","type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},{"title":"by name","type":"object","properties":{"name":{"type":"string"}},"required":["name"]}]}
},"required":["title","owner","target"]}`

// echoServer is a server whose tools answer with the arguments they were
// given, as text and as structured content.
func echoServer(tools ...*mcp.Tool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo-server", Version: "1.2.3"}, nil)
	for _, t := range tools {
		srv.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var v map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &v)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}, StructuredContent: v}, nil
		})
	}
	return srv
}

// TestBrowserDemo drives the inspector over the demo servers (one of each
// protocol era) as a user would: the servers, the tool list and its
// filter, a call and its result, progress and cancel, a question from
// the server answered in a form, the trace, and a saved call run again.
func TestBrowserDemo(t *testing.T) {
	chromium(t)
	rec := ui.NewRecorder()
	srv := startUI(t, demoSession(t, rec), rec, &ui.Target{Demo: []string{"weather", "math"}})
	p := openPage(t, srv)

	// Servers: one of each era, with versions, capabilities, connect time.
	p.wait(`[data-testid="server"][data-server="weather"][data-protocol="2026-07-28"]`)
	p.wait(`[data-testid="server"][data-server="math"][data-protocol="2025-11-25"]`)
	if got := p.text(`[data-server="math"] [data-field="implementation"]`); !strings.Contains(got, "demo-math") {
		t.Errorf("math implementation shown as %q", got)
	}
	if got := p.text(`[data-server="weather"] [data-field="capabilities"]`); !strings.Contains(got, "tools") {
		t.Errorf("weather capabilities shown as %q", got)
	}
	if got := p.text(`[data-server="weather"] [data-field="connect-time"]`); !strings.HasSuffix(got, " ms") {
		t.Errorf("connect time shown as %q", got)
	}
	p.screenshot("servers")

	// Tools: the merged list with prefixes, and its filter.
	p.tab("tools")
	p.wait(`[data-testid="tool-item"][data-tool="weather_forecast"]`)
	if n := p.count(`[data-testid="tool-item"]`); n != 5 {
		t.Errorf("%d tools listed, want 5", n)
	}
	p.typeIn(`[data-testid="tool-filter"]`, "count")
	p.wait(`[data-testid="tool-count"][data-shown="1"]`)
	p.eval(`(() => { const f = document.querySelector('[data-testid="tool-filter"]'); f.value = ""; f.dispatchEvent(new Event("input")); return 0 })()`, nil)
	p.wait(`[data-testid="tool-count"][data-shown="5"]`)

	// A call: forecast for a city typed into the form.
	p.click(`[data-testid="tool-item"][data-tool="weather_forecast"]`)
	p.typeIn(`[data-testid="tool"] [data-path="/city"]`, "Lisbon")
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="structured"]`)
	if got := p.text(`[data-testid="call"] [data-testid="content-text"]`); !strings.HasPrefix(got, "Lisbon:") {
		t.Errorf("forecast text %q", got)
	}
	p.screenshot("call")
	p.click(`[data-testid="call"][data-status="done"] [data-testid="save-call"]`)

	// Progress, then cancel: a slow count on the handshake-era server.
	p.click(`[data-testid="tool-item"][data-tool="math_count"]`)
	// 100 numbers, 400 ms apart: 40 s, time enough to cancel on a loaded
	// machine.
	p.typeIn(`[data-testid="tool"] [data-path="/to"]`, "100")
	p.typeIn(`[data-testid="tool"] [data-path="/delay_ms"]`, "400")
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="running"] [data-testid="progress"][data-total="100"]:not([data-count="0"]):not([data-count="1"])`)
	p.screenshot("progress")
	p.click(`[data-testid="call"][data-status="running"] [data-testid="cancel-call"]`)
	p.wait(`[data-testid="call"][data-status="cancelled"]`)

	// A question from a 2026-07-28 server (input_required), answered here.
	p.click(`[data-testid="tool-item"][data-tool="weather_subscribe"]`)
	p.typeIn(`[data-testid="tool"] [data-path="/city"]`, "Oslo")
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="input"] [data-testid="elicitation"]`)
	p.typeIn(`[data-testid="elicitation"] [data-path="/email"]`, "ada@example.com")
	p.choose(`[data-testid="elicitation"] [data-path="/frequency"]`, "1")
	p.screenshot("elicitation")
	p.click(`[data-testid="answer-accept"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="content-text"]`)
	if got := p.text(`[data-testid="call"][data-status="done"] [data-testid="content-text"]`); got != "Subscribed ada@example.com to weekly alerts for Oslo." {
		t.Errorf("subscribe answered %q", got)
	}

	// The trace: both servers, the cancellation sent to math, filters.
	p.tab("trace")
	p.wait(`[data-testid="trace-row"][data-server="weather"][data-method="tools/call"]`)
	p.wait(`[data-testid="trace-row"][data-server="math"][data-method="notifications/cancelled"]`)
	p.choose(`[data-testid="trace-server"]`, "math")
	if n := p.count(`[data-testid="trace-row"]:not([data-server="math"])`); n != 0 {
		t.Errorf("%d rows of other servers shown when filtering on math", n)
	}
	p.typeIn(`[data-testid="trace-filter"]`, "notifications/progress")
	if n := p.count(`[data-testid="trace-row"]:not([data-method="notifications/progress"])`); n != 0 {
		t.Errorf("%d rows that are not progress shown when filtering on it", n)
	}
	p.screenshot("trace")
	var exported []map[string]any
	p.eval(`App.api("GET", "/api/trace/export.json")`, &exported)
	methods := map[string]bool{}
	for _, e := range exported {
		if m, ok := e["message"].(map[string]any); ok {
			if s, ok := m["method"].(string); ok {
				methods[e["server"].(string)+" "+s] = true
			}
		}
	}
	for _, want := range []string{"weather tools/call", "math tools/call", "math notifications/cancelled", "math notifications/progress"} {
		if !methods[want] {
			t.Errorf("exported trace has no %s", want)
		}
	}

	// The saved forecast, run again: same result.
	p.tab("saved")
	p.wait(`[data-testid="saved-call"][data-tool="weather_forecast"]`)
	p.click(`[data-testid="saved-call"][data-tool="weather_forecast"] [data-testid="saved-run"]`)
	p.wait(`[data-testid="saved-call"][data-tool="weather_forecast"][data-match="true"]`)
	var src string
	p.eval(`App.fetch("GET", "/api/saved/export.go").then(r => r.text())`, &src)
	for _, want := range []string{"func TestSavedCalls", `"weather_forecast"`, `"{\"city\":\"Lisbon\"}"`, `mcpadapter.Command{Path: "mcpadapter", Args: []string{"demo-server", "weather"}}`} {
		if !strings.Contains(src, want) {
			t.Errorf("exported Go test lacks %s:\n%s", want, src)
		}
	}
	p.screenshot("saved")
}

// TestBrowserNestedForm fills a form with nested objects, an array of
// objects, an enum and a oneOf, calls the tool, and checks the arguments
// the server received; then switches to raw JSON and back.
func TestBrowserNestedForm(t *testing.T) {
	chromium(t)
	rec := ui.NewRecorder()
	s := newSession(t, rec, "test", nil, named{name: "nested", target: echoServer(&mcp.Tool{Name: "plan", Description: "Echo a plan", InputSchema: json.RawMessage(planSchema)})})
	srv := startUI(t, s, rec, nil)
	p := openPage(t, srv)
	p.tab("tools")
	p.click(`[data-testid="tool-item"][data-tool="nested_plan"]`)
	form := `[data-testid="tool"] `
	if n := p.count(form + `[data-required]`); n != 5 { // title, owner, owner/name, target, and the chosen branch's name or id
		t.Logf("required marks: %d", n)
	}
	p.wait(form + `[data-required="/title"]`)
	p.typeIn(form+`[data-path="/title"]`, "Move house")
	p.typeIn(form+`[data-path="/owner/name"]`, "Ada")
	p.typeIn(form+`[data-path="/owner/age"]`, "36")
	p.choose(form+`select[data-path="/priority"]`, "2")
	p.click(form + `[data-add="/tags"]`)
	p.click(form + `[data-testid="add-item"][data-add="/tags"]`)
	p.typeIn(form+`[data-path="/tags/0"]`, "home")
	p.click(form + `[data-testid="add-item"][data-add="/tags"]`)
	p.typeIn(form+`[data-path="/tags/1"]`, "urgent")
	p.click(form + `[data-add="/steps"]`)
	p.click(form + `[data-testid="add-item"][data-add="/steps"]`)
	p.typeIn(form+`[data-path="/steps/0/action"]`, "pack")
	p.typeIn(form+`[data-path="/steps/0/repeat"]`, "3")
	p.choose(form+`select[data-path="/target"]`, "1")
	p.typeIn(form+`[data-path="/target/name"]`, "new flat")
	p.typeIn(form+`[data-path="/contact"]`, "ada@example.com")
	p.screenshot("form")
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="structured"]`)
	var got map[string]any
	if err := json.Unmarshal([]byte(p.text(`[data-testid="call"] [data-testid="content-text"]`)), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"title": "Move house", "owner": map[string]any{"name": "Ada", "age": 36.0}, "priority": "high",
		"tags": []any{"home", "urgent"}, "steps": []any{map[string]any{"action": "pack", "repeat": 3.0}},
		"target": map[string]any{"name": "new flat"}, "contact": "ada@example.com"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the server received %v\nwant %v", got, want)
	}

	// Raw JSON mode shows the same arguments, and an edit there comes back
	// to the form.
	p.click(`[data-testid="raw-toggle"]`)
	var raw string
	p.eval(`document.querySelector('[data-testid="raw-json"]').value`, &raw)
	var inRaw map[string]any
	if err := json.Unmarshal([]byte(raw), &inRaw); err != nil || !reflect.DeepEqual(inRaw, want) {
		t.Errorf("raw JSON mode shows %s (%v)", raw, err)
	}
	p.eval(`(() => { const r = document.querySelector('[data-testid="raw-json"]'); r.value = JSON.stringify({title: "t", owner: {name: "B"}, target: {id: 7}}); return 0 })()`, nil)
	p.click(`[data-testid="raw-toggle"]`)
	var back map[string]any
	p.eval(`App.currentForm.get()`, &back)
	if want := map[string]any{"title": "t", "owner": map[string]any{"name": "B"}, "target": map[string]any{"id": 7.0}}; !reflect.DeepEqual(back, want) {
		t.Errorf("after raw JSON the form holds %v, want %v", back, want)
	}
	var branch string
	p.eval(`document.querySelector('[data-testid="tool"] select[data-path="/target"]').value`, &branch)
	if branch != "0" {
		t.Errorf("target {id: 7} shown as branch %q, want 0 (by id)", branch)
	}
}
