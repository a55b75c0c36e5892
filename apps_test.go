package mcpadapter_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestAppOnlyToolHiddenFromModel: a tool whose _meta.ui.visibility leaves
// out "model" is not among Adapter.Tools, yet the application lists it
// with Client.Tools, calls it, and reads its ui:// view.
func TestAppOnlyToolHiddenFromModel(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{Apps: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	model := toolMap(t, ctx, a)
	if _, ok := model[testserver.AppOnlyTool]; ok {
		t.Errorf("the app-only tool %q was handed to the model", testserver.AppOnlyTool)
	}
	if _, ok := model[testserver.AppModelTool]; !ok {
		t.Errorf("the tool visible to model and app %q is missing", testserver.AppModelTool)
	}
	if _, ok := model["echo"]; !ok {
		t.Errorf("a tool without UI metadata is missing")
	}

	all, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var appOnly *mcpadapter.Tool
	for _, tl := range all {
		if tl.OriginalName == testserver.AppOnlyTool {
			appOnly = tl
		}
	}
	if appOnly == nil || appOnly.ModelVisible() {
		t.Fatalf("Client.Tools: the app-only tool %v (want it listed, not model-visible)", appOnly)
	}
	if ui := appOnly.UI(); ui == nil || ui.ResourceURI != testserver.AppViewURI || len(ui.Visibility) != 1 {
		t.Errorf("UI %+v", ui)
	}
	if got := mustCall(t, ctx, appOnly, `{}`).Text(); got != testserver.AppOnlyTool+" done" {
		t.Errorf("the app's call: %q", got)
	}
	view, err := c.ReadUIResource(ctx, appOnly)
	if err != nil || len(view.Contents) != 1 || view.Contents[0].Text != testserver.AppViewHTML {
		t.Errorf("ReadUIResource: %v, %v", view, err)
	}
}

// TestAppToolsOption: with Options.AppTools the adapter's tools include
// the one for the app only, with its _meta.ui, for a program that relays
// them to a host.
func TestAppToolsOption(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{Apps: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(c, &mcpadapter.Options{AppTools: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	appOnly, ok := tools[testserver.AppOnlyTool]
	if !ok || appOnly.ModelVisible() || appOnly.UI() == nil {
		t.Fatalf("the app-only tool with AppTools: %v", appOnly)
	}
	if _, ok := tools[testserver.AppModelTool]; !ok {
		t.Errorf("the tool for model and app is missing")
	}
}

// TestAppToolsWithToolSearch: an adapter that relays app-only tools to a
// host (AppTools) and shows the search pair for its catalog: the model's
// pair neither finds the app-only tool nor calls it; the host still gets
// it beside the pair.
func TestAppToolsWithToolSearch(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{Apps: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(c, &mcpadapter.Options{AppTools: true, ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	if _, ok := tools[testserver.AppOnlyTool]; !ok || tools[mcpadapter.SearchToolsName] == nil {
		t.Fatalf("the app-only tool beside the pair: %v", tools)
	}
	hits, err := a.Search(ctx, testserver.AppOnlyTool, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Tool.Name == testserver.AppOnlyTool {
			t.Errorf("the search offers the app-only tool to the model")
		}
	}
	found, err := tools[mcpadapter.SearchToolsName].Call(ctx, json.RawMessage(`{"query": "refresh the app dashboard"}`))
	if err != nil || strings.Contains(found.Text(), testserver.AppOnlyTool) {
		t.Errorf("search_tools: %v %s", err, found.Text())
	}
	res, err := tools[mcpadapter.CallToolName].Call(ctx, json.RawMessage(`{"name": "`+testserver.AppOnlyTool+`", "arguments": {}}`))
	if err == nil && !res.IsError {
		t.Errorf("call_tool ran the app-only tool for the model: %s", res.Text())
	}
}
