package eino

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
)

// MultimodalTool is an mcpadapter.Tool as an eino
// tool.EnhancedInvokableTool: images and audio reach the model as such
// instead of as a text description. Opt in only where the chat model
// accepts multimodal tool messages: in eino v0.7.36 the eino-ext OpenAI
// model rejects them, and ChatModelAgent neither emits an event for an
// enhanced tool's result nor collects its actions (so no Output either).
// Errors, interrupts and resumes work as for Tool.
type MultimodalTool struct{ *Tool }

// NewMultimodalTool wraps t; see NewTool.
func NewMultimodalTool(t *mcpadapter.Tool) (*MultimodalTool, error) {
	base, err := NewTool(t)
	if err != nil {
		return nil, err
	}
	return &MultimodalTool{base}, nil
}

// InvokableRun implements tool.EnhancedInvokableTool.
func (t *MultimodalTool) InvokableRun(ctx context.Context, arg *schema.ToolArgument, _ ...tool.Option) (*schema.ToolResult, error) {
	if arg == nil {
		arg = &schema.ToolArgument{}
	}
	res, err := t.run(ctx, arg.Text)
	var ir *mcpadapter.InputRequiredError
	if errors.As(err, &ir) {
		return nil, tool.StatefulInterrupt(ctx, ir.Pending.Interrupt(), ir.Pending)
	}
	if err != nil {
		return nil, err
	}
	return toolResult(res), nil
}

// toolResult converts a result block by block.
func toolResult(res *mcpadapter.Result) *schema.ToolResult {
	out := &schema.ToolResult{}
	text := func(s string) {
		out.Parts = append(out.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeText, Text: s})
	}
	// ModelContent: the blocks within the tool's result limit.
	for _, c := range res.ModelContent() {
		switch c := c.(type) {
		case *mcpadapter.ImageContent:
			data := base64.StdEncoding.EncodeToString(c.Data)
			out.Parts = append(out.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeImage,
				Image: &schema.ToolOutputImage{MessagePartCommon: schema.MessagePartCommon{Base64Data: &data, MIMEType: c.MIMEType}}})
		case *mcpadapter.AudioContent:
			data := base64.StdEncoding.EncodeToString(c.Data)
			out.Parts = append(out.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeAudio,
				Audio: &schema.ToolOutputAudio{MessagePartCommon: schema.MessagePartCommon{Base64Data: &data, MIMEType: c.MIMEType}}})
		default:
			text((&mcpadapter.Result{Content: []mcpadapter.Content{c}}).Text())
		}
	}
	if len(out.Parts) == 0 {
		text(res.Text())
	}
	if res.IsError {
		out.Parts = append([]schema.ToolOutputPart{{Type: schema.ToolPartTypeText, Text: "The tool reported an error:"}}, out.Parts...)
	}
	return out
}

var _ tool.EnhancedInvokableTool = (*MultimodalTool)(nil)
