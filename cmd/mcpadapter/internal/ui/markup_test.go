package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// markup is what a malicious server writes in every string it gives: if
// the page ever treats one as HTML, an element with data-pwn appears
// (and the image's handler would run, were inline script allowed).
const markup = `<b data-pwn="1">bold</b><img data-pwn="2" src="x" onerror="window.__pwned=1"><script>window.__pwned=2</script>`

// markupServer is a server with markup in its implementation, its
// instructions, a tool's names, description and every part of its input
// and output schemas a form shows (titles, descriptions, property names,
// enum values and names, defaults, formats, const, oneOf branches), its
// progress messages, questions and results (text, HTML resources, SVG
// and odd MIME types, links, structured content, _meta), its resources,
// templates and prompts; and a tool whose MCP Apps view tries to leave
// its frame for a page of the attacker's at escape.
func markupServer(escape string) *mcp.Server {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	m := q(markup)
	srv := mcp.NewServer(&mcp.Implementation{Name: "m" + markup, Title: markup, Version: markup}, &mcp.ServerOptions{Instructions: markup})
	schema := `{"type":"object","title":` + m + `,"description":` + m + `,"properties":{` +
		m + `:{"type":"string","title":` + m + `,"description":` + m + `,"default":` + m + `,"format":` + m + `},
		"e":{"enum":[` + m + `,{"x":` + m + `}],"enumNames":[` + m + `,` + m + `],"default":` + m + `},
		"c":{"const":` + m + `},
		"o":{"oneOf":[{"title":` + m + `,"type":"string"},{"description":` + m + `,"type":"number","minimum":1,"pattern":` + m + `}]},
		"n":{"type":"object","properties":{"deep":{"type":"array","items":{"type":"string","enum":[` + m + `]}}},"required":["deep"]}},
		"required":[` + m + `,"n","o","e"]}`
	srv.AddTool(&mcp.Tool{Name: "show", Title: markup, Description: markup, InputSchema: json.RawMessage(schema),
		OutputSchema: json.RawMessage(`{"type":"object","title":` + m + `}`), Annotations: &mcp.ToolAnnotations{Title: markup}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: markup})
			}
			if _, ok := req.Params.InputResponses["q"]; !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: markup,
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","title":` + m + `,"description":` + m + `}}}`)}}}, nil
			}
			svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="parent.__pwned=3"><script>parent.__pwned=4</script></svg>`)
			return &mcp.CallToolResult{
				Content: []mcp.Content{
					&mcp.TextContent{Text: markup},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://" + markup, MIMEType: "text/html", Text: markup}},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://blob", MIMEType: "text/html", Blob: []byte(markup)}},
					&mcp.ImageContent{MIMEType: "image/svg+xml", Data: svg},
					&mcp.ImageContent{MIMEType: "text/html", Data: []byte(markup)},
					&mcp.AudioContent{MIMEType: "audio/wav\"><b data-pwn=3>", Data: []byte(markup)},
					&mcp.ResourceLink{URI: "https://example.com/" + markup, Name: markup, Title: markup, Description: markup, MIMEType: markup},
				},
				StructuredContent: map[string]any{markup: markup},
				Meta:              mcp.Meta{markup: markup},
			}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "view", Description: "a view that tries to leave", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://m/view.html"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "ui://m/view.html", Name: "view", MIMEType: "text/html;profile=mcp-app"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			html := `<!doctype html><form id=f method=POST action="` + escape + `/form"></form><script>
const tries = [() => { top.location = "` + escape + `/top"; }, () => { window.open("` + escape + `/popup"); },
  () => { parent.postMessage({html: ` + q(markup) + `}, "*"); }, () => { document.getElementById("f").submit(); },
  () => { const a = document.createElement("a"); a.href = "` + escape + `/link"; a.target = "_top"; document.body.append(a); a.click(); },
  () => { location = "` + escape + `/self"; }];
for (const f of tries) { try { f(); } catch (e) {} }
parent.postMessage({from: "view", done: true}, "*");
</script>`
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://m/view.html", MIMEType: "text/html;profile=mcp-app", Text: html}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "test://r", Name: markup, Description: markup, MIMEType: "text/html"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://r", MIMEType: "text/html", Text: markup}}}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{x}", Name: markup, Description: markup},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://t/x", Text: markup}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "p", Title: markup, Description: markup, Arguments: []*mcp.PromptArgument{{Name: "a", Description: markup}}},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: markup, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: markup}}}}, nil
		})
	return srv
}

// TestBrowserServerMarkupIsText shows everything a malicious server
// says, in every view: nothing it wrote becomes an element of the page,
// no script of its runs, and its MCP Apps view reaches no page of the
// attacker's by navigating, opening, posting or linking.
func TestBrowserServerMarkupIsText(t *testing.T) {
	chromium(t)
	var escapes atomic.Int32
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		escapes.Add(1)
		t.Logf("the view reached %s %s", r.Method, r.URL)
	}))
	defer attacker.Close()
	rec := ui.NewRecorder()
	// The form's defaults leave the required oneOf empty, which the
	// adapter's argument check refuses before the server asks its
	// question; this test is about the server's strings, so the call goes
	// to the server as the form has it.
	s := newSession(t, rec, "markup", nil, named{name: "m", target: markupServer(attacker.URL), unchecked: true})
	srv := startUI(t, s, rec, nil)
	p := openPage(t, srv)
	check := func(where string) {
		t.Helper()
		var n int
		p.eval(`document.querySelectorAll("[data-pwn], script:not([src]), main img:not([src^='data:image/'])").length`, &n)
		if n != 0 {
			t.Errorf("%s: %d elements of the server's markup in the page", where, n)
		}
		var pwned any
		p.eval(`window.__pwned === undefined ? null : window.__pwned`, &pwned)
		if pwned != nil {
			t.Fatalf("%s: the server's script ran (%v)", where, pwned)
		}
	}
	p.wait(`[data-testid="server"]`)
	if got := p.text(`[data-testid="server"] [data-field="implementation"]`); !strings.Contains(got, markup) {
		t.Errorf("the implementation is shown as %q", got)
	}
	check("servers")
	p.tab("tools")
	p.click(`[data-testid="tool-item"][data-tool="m_show"]`)
	p.wait(`[data-testid="schema-form"]`)
	check("the tool's form")
	p.click(`[data-testid="raw-toggle"]`)
	p.click(`[data-testid="raw-toggle"]`)
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="input"] [data-testid="elicitation"]`)
	check("the question")
	p.click(`[data-testid="answer-accept"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="result"]`)
	if got := p.text(`[data-testid="call"] [data-testid="content-text"]`); got != markup {
		t.Errorf("the result's text is shown as %q", got)
	}
	check("the result")
	p.click(`[data-testid="save-call"]`)
	p.tab("saved")
	p.wait(`[data-testid="saved-call"]`)
	check("saved calls")

	p.tab("tools")
	p.click(`[data-testid="tool-item"][data-tool="m_view"]`)
	p.eval(`(() => { window.__viewDone = new Promise((done) => addEventListener("message", (e) => { if (e.data && e.data.from === "view" && e.data.done) done(true); })); return 0 })()`, nil)
	p.click(`[data-testid="app-show"]`)
	p.wait(`iframe[data-testid="app-frame"]`)
	var ran bool
	p.eval(`window.__viewDone`, &ran)
	var loc string
	p.eval(`location.origin`, &loc)
	if !strings.HasPrefix(srv.URL(), loc) {
		t.Errorf("the view took the page to %s", loc)
	}
	targets, err := chromedp.Targets(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	for _, tg := range targets {
		if tg.Type == "page" {
			pages++
		}
	}
	if pages != 1 {
		t.Errorf("%d pages open after the view ran: it opened a window", pages)
	}
	if n := escapes.Load(); n != 0 {
		t.Errorf("the view reached the attacker's server %d times", n)
	}
	check("the view")

	for _, v := range []string{"resources", "prompts", "tasks", "trace", "model"} {
		p.tab(v)
		check(v)
	}
	p.tab("resources")
	p.click(`[data-testid="resource-item"][data-uri="test://r"]`)
	p.wait(`[data-testid="resource-content"][data-state="ready"] [data-testid="content-resource"]`)
	check("a resource")
	p.tab("prompts")
	p.click(`[data-testid="prompt-item"][data-prompt="p"]`)
	p.click(`[data-testid="prompt-get"]`)
	p.wait(`[data-testid="prompt-messages"][data-state="ready"]`)
	check("a prompt")
	p.tab("trace")
	p.typeIn(`[data-testid="trace-filter"]`, "data-pwn")
	p.wait(`[data-testid="trace-row"]`)
	p.click(`[data-testid="trace-row"] td.msg`)
	check("the trace")
}
