package eino

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
)

// SkillTool returns a tool, "load_skill", that gives the agent a server's
// skills (the MCP skills extension) when it asks for them: its
// description names each skill with its description, and a call loads one
// (Client.Skill: SKILL.md read and checked against the listing) and
// returns its instructions, or one of its other files when the call names
// it. Nothing is read before the model asks. skills are from
// c.Skills; with none, SkillTool returns nil and no error. What a call
// returns keeps to mcpadapter.DefaultMaxResultBytes, as any tool's result
// does (a server's skill may be of any size), and each skill's name and
// description take one line of the description, whatever they hold.
func SkillTool(c *mcpadapter.Client, skills []*mcpadapter.Skill) (tool.InvokableTool, error) {
	if c == nil {
		return nil, fmt.Errorf("eino.SkillTool: nil client")
	}
	if len(skills) == 0 {
		return nil, nil
	}
	var desc strings.Builder
	desc.WriteString("Load the instructions of a skill before a task it covers. Skills:\n")
	names := make([]string, 0, len(skills))
	for _, s := range skills {
		names = append(names, s.Name)
		fmt.Fprintf(&desc, "- %s: %s\n", oneLine(s.Name), oneLine(s.Description))
	}
	desc.WriteString("Give \"file\" (a URI the instructions name) to read one of the skill's other files.")
	return &skillTool{c: c, skills: skills, names: names, desc: desc.String()}, nil
}

type skillTool struct {
	c      *mcpadapter.Client
	skills []*mcpadapter.Skill
	names  []string
	desc   string
}

// Info implements tool.BaseTool.
func (t *skillTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "load_skill", Desc: t.desc, ParamsOneOf: schema.NewParamsOneOfByParams(map[string]*schema.ParameterInfo{
		"name": {Type: schema.String, Desc: "the skill's name", Enum: slices.Clone(t.names), Required: true},
		"file": {Type: schema.String, Desc: "a file of the skill to read instead of its instructions"},
	})}, nil
}

// InvokableRun implements tool.InvokableTool. A skill that fails its
// checks is an error the model reads, not a failure of the run.
func (t *skillTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	var in struct {
		Name string `json:"name"`
		File string `json:"file"`
	}
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		return "load_skill: the arguments are not a JSON object with \"name\"", nil
	}
	if !slices.Contains(t.names, in.Name) {
		return fmt.Sprintf("load_skill: no skill %q; skills: %s", in.Name, strings.Join(t.names, ", ")), nil
	}
	if in.File == "" {
		s, err := t.c.Skill(ctx, in.Name)
		if err != nil {
			return "load_skill: " + err.Error(), nil
		}
		return limitText(s.Instructions), nil
	}
	for _, s := range t.skills {
		if s.Name == in.Name {
			b, err := t.c.SkillFile(ctx, s, in.File)
			if err != nil {
				return "load_skill: " + err.Error(), nil
			}
			return limitText(string(b)), nil
		}
	}
	return "", fmt.Errorf("load_skill: skill %q vanished", in.Name)
}

// limitText is a skill's file for the model, cut to the limit of any
// tool's result.
func limitText(text string) string {
	res := &mcpadapter.Result{Content: []mcpadapter.Content{&mcpadapter.TextContent{Text: text}}}
	res.SetTextLimit(mcpadapter.DefaultMaxResultBytes)
	return res.Text()
}

// oneLine puts s on one line of at most 300 bytes, for a description.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "..."
	}
	return s
}
