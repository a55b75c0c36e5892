package openai

import (
	"encoding/base64"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/toolcall"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
)

// Text renders the outcome as the text a model reads: the tool's text
// (images and audio described), "Error: ..." for a tool error.
func (o Outcome) Text() string {
	switch {
	case o.Err != nil || o.Pending != nil:
		return "Error: " + toolcall.Outcome[Call](o).Text()
	case o.Result == nil:
		return ""
	}
	var parts []string
	// ModelContent: the blocks within the tool's result limit.
	for _, c := range o.Result.ModelContent() {
		parts = append(parts, toolcall.ContentText(c))
	}
	t := strings.Join(parts, "\n")
	if o.Result.IsError {
		return "Error: " + t
	}
	return t
}

// ChatMessage returns the Chat Completions tool message for the outcome
// (text only: Chat Completions tool messages take no images).
func (o Outcome) ChatMessage() oai.ChatCompletionMessageParamUnion {
	return oai.ToolMessage(o.Text(), o.Call.ID)
}

// ResponseItem returns the Responses function_call_output item: text
// parts, and images as input_image parts (data URLs).
func (o Outcome) ResponseItem() responses.ResponseInputItemUnionParam {
	var items responses.ResponseFunctionCallOutputItemListParam
	if o.Result != nil && o.Err == nil && o.Pending == nil {
		prefix := ""
		if o.Result.IsError {
			prefix = "Error: "
		}
		for _, c := range o.Result.ModelContent() {
			if img, ok := c.(*mcpadapter.ImageContent); ok {
				url := "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
				items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{
					OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: param.NewOpt(url)}})
				continue
			}
			items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{
				OfInputText: &responses.ResponseInputTextContentParam{Text: prefix + toolcall.ContentText(c)}})
			prefix = ""
		}
	}
	item := responses.ResponseInputItemParamOfFunctionCallOutput(o.Text())
	if len(items) > 0 {
		item = responses.ResponseInputItemParamOfFunctionCallOutput(items)
	}
	item.OfFunctionCallOutput.CallID = param.NewOpt(o.Call.ID)
	return item
}
