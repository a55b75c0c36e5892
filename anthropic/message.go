package anthropic

import (
	"encoding/base64"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/toolcall"
)

// Text renders the outcome as the text a model reads: the tool's text
// (images and audio described), the server's error text for a tool error.
func (o Outcome) Text() string { return toolcall.Outcome[Call](o).Text() }

// IsError reports whether the model should read the outcome as an error
// (the tool_result's is_error): a tool error, or a call that did not
// finish (transport failure, pending question).
func (o Outcome) IsError() bool { return toolcall.Outcome[Call](o).IsError() }

// imageTypes are the media types Messages image blocks accept.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// ResultBlock returns the outcome as a tool_result content block: text
// blocks, image blocks for images the API accepts, is_error as IsError
// says.
func (o Outcome) ResultBlock() ant.ContentBlockParamUnion {
	tr := &ant.ToolResultBlockParam{ToolUseID: o.Call.ID}
	if o.IsError() {
		tr.IsError = ant.Bool(true)
	}
	if o.Result == nil || o.Err != nil || o.Pending != nil {
		tr.Content = []ant.ToolResultBlockParamContentUnion{{OfText: &ant.TextBlockParam{Text: o.Text()}}}
		return ant.ContentBlockParamUnion{OfToolResult: tr}
	}
	for _, c := range o.Result.Content {
		if img, ok := c.(*mcpadapter.ImageContent); ok && imageTypes[img.MIMEType] {
			tr.Content = append(tr.Content, ant.ToolResultBlockParamContentUnion{OfImage: &ant.ImageBlockParam{
				Source: ant.ImageBlockParamSourceUnion{OfBase64: &ant.Base64ImageSourceParam{
					Data:      base64.StdEncoding.EncodeToString(img.Data),
					MediaType: ant.Base64ImageSourceMediaType(img.MIMEType),
				}}}})
			continue
		}
		if t := toolcall.ContentText(c); t != "" {
			tr.Content = append(tr.Content, ant.ToolResultBlockParamContentUnion{OfText: &ant.TextBlockParam{Text: t}})
		}
	}
	return ant.ContentBlockParamUnion{OfToolResult: tr}
}

// UserMessage returns the user message that answers one assistant turn:
// one tool_result block per outcome, in order.
func UserMessage(outs []Outcome) ant.MessageParam {
	blocks := make([]ant.ContentBlockParamUnion, 0, len(outs))
	for _, o := range outs {
		blocks = append(blocks, o.ResultBlock())
	}
	return ant.NewUserMessage(blocks...)
}
