package eino_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	mcpeino "github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestSkillTool: the agent sees the skill in load_skill's description,
// and the instructions are read only when it calls the tool.
func TestSkillTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, st := testserver.NewWithState(testserver.Options{Skills: true})
	c, err := mcpadapter.NewClient(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	skills, err := c.Skills(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := mcpeino.SkillTool(c, skills)
	if err != nil || lt == nil {
		t.Fatalf("SkillTool: %v, %v", lt, err)
	}
	info, err := lt.Info(ctx)
	if err != nil || info.Name != "load_skill" || !strings.Contains(info.Desc, "pdf-processing: Extract, fill") {
		t.Fatalf("Info: %+v, %v", info, err)
	}
	if n := st.Requests("resources/read"); n != 0 {
		t.Fatalf("%d reads before the model asked", n)
	}
	out, err := lt.InvokableRun(ctx, `{"name":"pdf-processing"}`)
	if err != nil || out != "\n"+testserver.SkillBody {
		t.Errorf("load_skill: %q, %v", out, err)
	}
	out, err = lt.InvokableRun(ctx, `{"name":"pdf-processing","file":"`+testserver.SkillRefURI+`"}`)
	if err != nil || !strings.HasPrefix(out, "FORMS:") {
		t.Errorf("load_skill file: %q, %v", out, err)
	}
	out, _ = lt.InvokableRun(ctx, `{"name":"nope"}`)
	if !strings.Contains(out, "no skill") {
		t.Errorf("unknown skill: %q", out)
	}
}
