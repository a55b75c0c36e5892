package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/openai"
)

// TestSkillTool: the model sees load_skill (strict) beside the server's
// tools, with each skill named in its description; the instructions are
// read only when it calls the tool, through the documented loop
// (finishTurn), and a skill file or an unknown skill is answered there too.
func TestSkillTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, st := testserver.NewWithState(testserver.Options{Skills: true})
	c, err := mcpadapter.NewClient(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	skills, err := c.Skills(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := openai.New(tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.AddSkillTool(c, skills); err != nil {
		t.Fatal(err)
	}
	if err := ts.AddSkillTool(c, skills); err == nil {
		t.Error("a second load_skill: no error")
	}
	data, _ := json.Marshal(ts.ChatTools())
	if !strings.Contains(string(data), `"name":"load_skill"`) || !strings.Contains(string(data), "pdf-processing: Extract, fill") {
		t.Fatalf("ChatTools lack load_skill: %s", data)
	}
	var fn struct {
		Function struct {
			Strict     bool           `json:"strict"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	for _, raw := range ts.ChatTools() {
		b, _ := json.Marshal(raw)
		if strings.Contains(string(b), `"name":"load_skill"`) {
			_ = json.Unmarshal(b, &fn)
		}
	}
	if !fn.Function.Strict || fn.Function.Parameters["additionalProperties"] != false {
		t.Errorf("load_skill is not a strict tool: %+v", fn.Function)
	}
	resp, _ := json.Marshal(ts.ResponseTools())
	if !strings.Contains(string(resp), `"name":"load_skill"`) {
		t.Errorf("ResponseTools lack load_skill: %s", resp)
	}
	if n := st.Requests("resources/read"); n != 0 {
		t.Fatalf("%d reads before the model asked", n)
	}
	noAsk := func(*elicitation.Interrupt) *elicitation.Resume { return nil }
	msgs, err := finishTurn(ctx, ts, []openai.Call{
		{ID: "c1", Name: "load_skill", Arguments: `{"name":"pdf-processing","file":null}`},
		{ID: "c2", Name: "load_skill", Arguments: `{"name":"pdf-processing","file":"` + testserver.SkillRefURI + `"}`},
		{ID: "c3", Name: "load_skill", Arguments: `{"name":"nope","file":null}`},
		{ID: "c4", Name: "echo", Arguments: `{"text":"hi"}`},
	}, noAsk)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		var tm struct {
			Content string `json:"content"`
		}
		_ = json.Unmarshal(b, &tm)
		got = append(got, tm.Content)
	}
	if len(got) != 4 || got[0] != "\n"+testserver.SkillBody || !strings.HasPrefix(got[1], "FORMS:") ||
		!strings.Contains(got[2], `no skill "nope"`) || !strings.Contains(got[3], "hi") {
		t.Errorf("tool messages: %q", got)
	}
}
