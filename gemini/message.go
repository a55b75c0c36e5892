package gemini

import (
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/toolcall"
	"google.golang.org/genai"
)

// Text renders the outcome as the text a model reads: the tool's text
// (images and audio described), the server's error text for a tool error.
func (o Outcome) Text() string { return toolcall.Outcome[Call](o).Text() }

// IsError reports whether the model should read the outcome as an error
// ({"error": ...}): a tool error, or a call that did not finish
// (transport failure, pending question).
func (o Outcome) IsError() bool { return toolcall.Outcome[Call](o).IsError() }

// imageTypes are the image types Gemini takes in a function response.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true}

// FunctionResponse returns the outcome as Gemini's FunctionResponse:
// {"output": text}, or {"error": text} when IsError; images the API
// accepts go into Parts as inline data, each named in the text by its
// display name.
func (o Outcome) FunctionResponse() *genai.FunctionResponse {
	fr := &genai.FunctionResponse{ID: o.Call.ID, Name: o.Call.Name}
	var texts []string
	if o.Result != nil && o.Err == nil && o.Pending == nil {
		for _, c := range o.Result.Content {
			if img, ok := c.(*mcpadapter.ImageContent); ok && imageTypes[img.MIMEType] {
				name := fmt.Sprintf("image-%d.%s", len(fr.Parts)+1, strings.TrimPrefix(img.MIMEType, "image/"))
				p := genai.NewFunctionResponsePartFromBytes(img.Data, img.MIMEType)
				p.InlineData.DisplayName = name
				fr.Parts = append(fr.Parts, p)
				texts = append(texts, fmt.Sprintf("[image %s attached]", name))
				continue
			}
			texts = append(texts, toolcall.ContentText(c))
		}
	} else {
		texts = []string{o.Text()}
	}
	key := "output"
	if o.IsError() {
		key = "error"
	}
	fr.Response = map[string]any{key: strings.Join(texts, "\n")}
	return fr
}

// Part returns the outcome as a content part.
func (o Outcome) Part() *genai.Part {
	return &genai.Part{FunctionResponse: o.FunctionResponse()}
}

// UserContent returns the content that answers one model turn: one
// FunctionResponse part per outcome, in order, with role "user".
func UserContent(outs []Outcome) *genai.Content {
	parts := make([]*genai.Part, 0, len(outs))
	for _, o := range outs {
		parts = append(parts, o.Part())
	}
	return genai.NewContentFromParts(parts, genai.RoleUser)
}
