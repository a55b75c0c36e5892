package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/toolcall"
)

// SkillToolName is the name of the tool AddSkillTool adds.
const SkillToolName = "load_skill"

// AddSkillTool adds a tool, "load_skill", that gives the model a server's
// skills (the MCP skills extension) when it asks for them, as
// eino.SkillTool does: its description names each skill with its
// description, and a call loads one (Client.Skill: SKILL.md read and
// checked against the listing) and returns its instructions, or one of
// its other files when the call names it ("file", a URI the instructions
// name). Nothing is read before the model asks. skills are from
// c.Skills; with none, AddSkillTool adds nothing. The tool is in
// ChatTools and ResponseTools (strict) and Run answers its calls; a
// skill that fails its checks is an error result the model reads.
func (s *Toolset) AddSkillTool(c *mcpadapter.Client, skills []*mcpadapter.Skill) error {
	if c == nil {
		return errors.New("openai.AddSkillTool: nil client")
	}
	if len(skills) == 0 {
		return nil
	}
	if _, dup := s.byName[SkillToolName]; dup {
		return fmt.Errorf("openai.AddSkillTool: the toolset already has a tool named %q", SkillToolName)
	}
	var desc strings.Builder
	desc.WriteString("Load the instructions of a skill before a task it covers. Skills:\n")
	names := make([]any, 0, len(skills))
	for _, sk := range skills {
		names = append(names, sk.Name)
		fmt.Fprintf(&desc, "- %s: %s\n", sk.Name, oneLine(sk.Description))
	}
	desc.WriteString("Give \"file\" (a URI the instructions name) to read one of the skill's other files; null for the instructions.")
	st := &skillTool{c: c, skills: skills}
	e := &entry{
		name: SkillToolName,
		desc: desc.String(),
		params: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name": map[string]any{"type": "string", "description": "the skill's name", "enum": names},
				"file": map[string]any{"type": []any{"string", "null"}, "description": "a file of the skill to read instead of its instructions"},
			},
			"required":             []any{"name", "file"},
			"additionalProperties": false,
		},
		strict: true,
		local:  st.run,
	}
	s.byName[SkillToolName] = e
	s.order = append(s.order, e)
	return nil
}

type skillTool struct {
	c      *mcpadapter.Client
	skills []*mcpadapter.Skill
}

// run answers one load_skill call.
func (t *skillTool) run(ctx context.Context, args json.RawMessage) *mcpadapter.Result {
	var in struct {
		Name string  `json:"name"`
		File *string `json:"file"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return toolcall.ErrorResult(SkillToolName + `: the arguments are not a JSON object with "name"`)
	}
	i := slices.IndexFunc(t.skills, func(s *mcpadapter.Skill) bool { return s.Name == in.Name })
	if i < 0 {
		names := make([]string, 0, len(t.skills))
		for _, s := range t.skills {
			names = append(names, s.Name)
		}
		return toolcall.ErrorResult(fmt.Sprintf("%s: no skill %q; skills: %s", SkillToolName, in.Name, strings.Join(names, ", ")))
	}
	if in.File == nil || *in.File == "" {
		s, err := t.c.Skill(ctx, in.Name)
		if err != nil {
			return toolcall.ErrorResult(SkillToolName + ": " + err.Error())
		}
		return textResult(s.Instructions)
	}
	b, err := t.c.SkillFile(ctx, t.skills[i], *in.File)
	if err != nil {
		return toolcall.ErrorResult(SkillToolName + ": " + err.Error())
	}
	return textResult(string(b))
}

func textResult(text string) *mcpadapter.Result {
	return &mcpadapter.Result{Content: []mcpadapter.Content{&mcpadapter.TextContent{Text: text}}}
}

// oneLine puts s on one line of at most 300 bytes, for a description.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "..."
	}
	return s
}
