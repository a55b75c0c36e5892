package ui_test

import (
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// TestBrowserEverything drives the inspector over the official
// server-everything (a handshake-era server over stdio): a question the
// server pushes mid-call (elicitation/create) answered in the page, a
// call that runs as a task watched to its end, progress, results of every
// content type, resources and a template, a prompt with completions, the
// model view and tool search, and a reconnect that changes nothing.
func TestBrowserEverything(t *testing.T) {
	chromium(t)
	testenv.SkipShort(t, "starts server-everything")
	path, args, env := testenv.EverythingStdio(t)
	rec := ui.NewRecorder()
	s := newSession(t, rec, "server-everything", nil, named{name: "everything", target: mcpadapter.Command{Path: path, Args: args, Env: env}})
	srv := startUI(t, s, rec, &ui.Target{Command: append([]string{path}, args...)})
	p := openPage(t, srv)

	p.wait(`[data-testid="server"][data-server="everything"][data-protocol="2025-11-25"]`)
	if got := p.text(`[data-server="everything"] [data-field="capabilities"]`); !strings.Contains(got, "prompts") || !strings.Contains(got, "resources") {
		t.Errorf("capabilities shown as %q", got)
	}

	// A handshake-era question, pushed by the server during the call.
	p.tab("tools")
	p.click(`[data-testid="tool-item"][data-tool="everything_trigger-elicitation-request"]`)
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="input"] [data-testid="elicitation"][data-era="handshake"]`)
	p.typeIn(`[data-testid="elicitation"] [data-path="/name"]`, "Grace Hopper")
	p.typeIn(`[data-testid="elicitation"] [data-path="/email"]`, "grace@example.com")
	p.screenshot("elicitation-handshake")
	p.click(`[data-testid="answer-accept"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="result"]`)
	if got := p.text(`[data-testid="call"][data-status="done"] [data-testid="result"]`); !strings.Contains(got, "Grace Hopper") || !strings.Contains(got, "grace@example.com") {
		t.Errorf("the server did not get the answers: %.300s", got)
	}

	// A tool that requires a task: its statuses over time, then its result.
	p.click(`[data-testid="tool-item"][data-tool="everything_simulate-research-query"]`)
	p.typeIn(`[data-testid="tool"] [data-path="/topic"]`, "gophers")
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"] [data-testid="task"] [data-testid="task-status"][data-status="working"]`)
	p.tab("tasks")
	p.wait(`[data-testid="task-card"] [data-testid="task"]`)
	p.wait(`[data-testid="task-card"][data-status="done"] [data-testid="task"][data-status="completed"]`)
	p.screenshot("tasks")
	if got := p.text(`[data-testid="task-card"] [data-testid="result"]`); !strings.Contains(got, "gophers") {
		t.Errorf("task result %.200s", got)
	}

	// Progress on a long operation, to its end.
	p.tab("tools")
	p.click(`[data-testid="tool-item"][data-tool="everything_trigger-long-running-operation"]`)
	p.typeIn(`[data-testid="tool"] [data-path="/duration"]`, "2")
	p.typeIn(`[data-testid="tool"] [data-path="/steps"]`, "4")
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"] [data-testid="progress"][data-total="4"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="result"]`)

	// Results by content type.
	for _, c := range []struct{ tool, want string }{
		{"everything_get-tiny-image", `[data-testid="content-image"] img[src^="data:image/png;base64,"]`},
		{"everything_get-resource-links", `[data-testid="content-resource_link"]`},
		{"everything_get-resource-reference", `[data-testid="content-resource"]`},
	} {
		p.click(`[data-testid="tool-item"][data-tool="` + c.tool + `"]`)
		p.click(`[data-testid="call-button"]`)
		p.wait(`[data-testid="call"][data-status="done"] ` + c.want)
	}
	p.click(`[data-testid="tool-item"][data-tool="everything_get-structured-content"]`)
	p.choose(`[data-testid="tool"] select[data-path="/location"]`, "1")
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="structured"] details`)
	if got := p.text(`[data-testid="call"] [data-testid="structured"]`); !strings.Contains(got, "temperature") {
		t.Errorf("structured content %.200s", got)
	}
	p.screenshot("results")

	// Resources and a template.
	p.tab("resources")
	p.wait(`[data-testid="resource-item"]`)
	p.click(`[data-testid="resource-item"]`)
	p.wait(`[data-testid="resource-content"][data-state="ready"] [data-testid="content-resource"]`)
	tpl := `[data-testid="template"][data-template="demo://resource/dynamic/text/{resourceId}"]`
	p.typeIn(tpl+` [data-testid="template-arg"]`, "7")
	p.click(tpl + ` [data-testid="template-read"]`)
	p.wait(`[data-testid="resource-content"][data-uri="demo://resource/dynamic/text/7"][data-state="ready"] [data-testid="content-resource"]`)
	p.screenshot("resources")

	// A prompt whose arguments complete, the second from the first.
	p.tab("prompts")
	p.click(`[data-testid="prompt-item"][data-prompt="completable-prompt"]`)
	p.typeIn(`[data-testid="prompt-arg"][data-arg="department"]`, "Eng")
	p.wait(`[data-testid="prompt-arg"][data-arg="department"][data-completions="1"]`)
	var options []string
	p.eval(`[...document.querySelector('[data-arg="department"]').list.options].map(o => o.value)`, &options)
	if len(options) != 1 || options[0] != "Engineering" {
		t.Errorf("department completions %v", options)
	}
	p.eval(`(() => { const i = document.querySelector('[data-arg="department"]'); i.value = "Engineering"; return 0 })()`, nil)
	p.typeIn(`[data-testid="prompt-arg"][data-arg="name"]`, "A")
	p.wait(`[data-testid="prompt-arg"][data-arg="name"][data-completions="1"]`)
	p.typeIn(`[data-testid="prompt-arg"][data-arg="name"]`, "lice")
	p.click(`[data-testid="prompt-get"]`)
	p.wait(`[data-testid="prompt-messages"][data-state="ready"] [data-testid="prompt-message"][data-role="user"]`)
	if got := p.text(`[data-testid="prompt-message"]`); !strings.Contains(got, "Please promote Alice to the head of the Engineering team.") {
		t.Errorf("prompt %q", got)
	}

	// The model view: every profile's cost; what OpenAI strict changed.
	p.tab("model")
	p.wait(`[data-testid="profile-total"][data-profile="gemini"]`)
	for _, prof := range []string{"verbatim", "openai", "openai-strict", "anthropic", "gemini"} {
		p.wait(`[data-testid="profile-total"][data-profile="` + prof + `"]:not([data-tokens="0"])`)
	}
	p.wait(`#view-model[data-profile="openai-strict"] [data-testid="profiled-tool"][data-changed="true"] [data-testid="change"][data-rule="additional-properties-false"]`)
	p.wait(`[data-testid="pair-tool"][data-tool="search_tools"]`)
	p.typeIn(`[data-testid="search-query"]`, "tiny image")
	p.click(`[data-testid="search-run"]`)
	p.wait(`[data-testid="search-hits"][data-query="tiny image"] [data-testid="search-hit"]`)
	var first string
	p.eval(`document.querySelector('[data-testid="search-hit"]').dataset.tool`, &first)
	if first != "everything_get-tiny-image" {
		t.Errorf("the best hit for %q is %s", "tiny image", first)
	}
	p.eval(`(() => { document.querySelector('[data-testid="profiled-tool"][data-tool="everything_get-sum"]').open = true; return 0 })()`, nil)
	p.screenshot("model")
	p.choose(`[data-testid="profile-select"]`, "gemini")
	p.wait(`#view-model[data-profile="gemini"][data-state="ready"]`)

	// A reconnect with the same server changes nothing.
	p.tab("servers")
	p.click(`[data-testid="reconnect"]`)
	p.wait(`[data-testid="reconnect-diff"] [data-testid="diff-none"]`)
}
