package eino_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestResultLimit: a result over Options.MaxResultBytes reaches the model
// cut, with the note, from both eino tools.
func TestResultLimit(t *testing.T) {
	tools := adapterTools(t, testserver.New(testserver.Options{}), &mcpadapter.Options{MaxResultBytes: 1000})
	var long *mcpadapter.Tool
	for _, tl := range tools {
		if tl.Name == "long_text" {
			long = tl
		}
	}
	if long == nil {
		t.Fatal("no long_text tool")
	}
	et, err := eino.NewTool(long)
	if err != nil {
		t.Fatal(err)
	}
	out, err := et.InvokableRun(context.Background(), `{"bytes":50000}`)
	if err != nil || len(out) > 1000 || !strings.Contains(out, " of 50000 bytes shown") {
		t.Errorf("Tool: %d bytes, %v", len(out), err)
	}
	mt, err := eino.NewMultimodalTool(long)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mt.InvokableRun(context.Background(), &schema.ToolArgument{Text: `{"bytes":50000}`})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range res.Parts {
		n += len(p.Text)
	}
	if n > 1000 || !strings.Contains(res.Parts[len(res.Parts)-1].Text, " of 50000 bytes shown") {
		t.Errorf("MultimodalTool: %d bytes of text in %d parts", n, len(res.Parts))
	}
}
