package ui

import (
	"encoding/json"
	"regexp"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultView is a tool's result as the page renders it, block by block.
type resultView struct {
	IsError bool          `json:"isError"`
	Content []contentView `json:"content"`
	// Structured is the structured content, shown beside the tool's
	// OutputSchema.
	Structured   json.RawMessage `json:"structured,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Meta         map[string]any  `json:"meta,omitempty"`
	// ModelText is the text a model is given (Result.Text).
	ModelText string `json:"modelText"`
	// Failure is set when the result stands for a transport failure.
	Failure *errorInfo `json:"failure,omitempty"`
}

// contentView is one content block. Data (image, audio, a resource's
// blob) is base64 in JSON; MIMEType is a plain type/subtype or
// application/octet-stream, so that the page can put it in a data: URL.
type contentView struct {
	Type        string           `json:"type"`
	Text        string           `json:"text,omitempty"`
	MIMEType    string           `json:"mimeType,omitempty"`
	Data        []byte           `json:"data,omitempty"`
	URI         string           `json:"uri,omitempty"`
	Name        string           `json:"name,omitempty"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Size        *int64           `json:"size,omitempty"`
	Raw         json.RawMessage  `json:"raw,omitempty"`
	Annotations *mcp.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any   `json:"meta,omitempty"`
}

var plainMIME = regexp.MustCompile(`^[a-z]+/[a-z0-9][a-z0-9.+-]*$`)

// safeMIME returns t when it is a plain type/subtype, otherwise
// application/octet-stream.
func safeMIME(t string) string {
	if plainMIME.MatchString(t) {
		return t
	}
	return "application/octet-stream"
}

// resultOf turns a result into its view; the output schema is the
// listed tool's.
func resultOf(res *mcpadapter.Result, server, tool string, s *Server) *resultView {
	v := &resultView{IsError: res.IsError, Content: []contentView{}, Meta: res.Meta, ModelText: res.Text()}
	if res.Artifact != nil {
		v.Structured = res.Artifact.StructuredContent
	}
	if res.Failure != nil {
		v.Failure = errorView(res.Failure)
	}
	if s != nil {
		s.state.mu.Lock()
		for _, t := range s.state.tools {
			if t.Server == server && t.Name == tool {
				v.OutputSchema = t.OutputSchema
			}
		}
		s.state.mu.Unlock()
	}
	for _, c := range res.Content {
		v.Content = append(v.Content, contentOf(c))
	}
	return v
}

func contentOf(c mcpadapter.Content) contentView {
	switch c := c.(type) {
	case *mcpadapter.TextContent:
		return contentView{Type: "text", Text: c.Text, Annotations: c.Annotations, Meta: c.Meta}
	case *mcpadapter.ImageContent:
		return contentView{Type: "image", Data: c.Data, MIMEType: safeMIME(c.MIMEType), Annotations: c.Annotations, Meta: c.Meta}
	case *mcpadapter.AudioContent:
		return contentView{Type: "audio", Data: c.Data, MIMEType: safeMIME(c.MIMEType), Annotations: c.Annotations, Meta: c.Meta}
	case *mcpadapter.ResourceLinkContent:
		return contentView{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
			MIMEType: safeMIME(c.MIMEType), Size: c.Size, Annotations: c.Annotations, Meta: c.Meta}
	case *mcpadapter.EmbeddedResourceContent:
		return contentView{Type: "resource", URI: c.URI, MIMEType: safeMIME(c.MIMEType), Text: c.Text, Data: c.Blob,
			Annotations: c.Annotations, Meta: c.Meta}
	case *mcpadapter.UnknownContent:
		return contentView{Type: "unknown", Name: c.Type, Raw: c.Raw, Annotations: c.Annotations, Meta: c.Meta}
	}
	return contentView{Type: "unknown"}
}

// sameResult reports whether got is the result a saved call expects:
// the same error flag, content blocks and structured content (by
// meaning, not spacing); _meta is not compared.
func sameResult(want, got *resultView) bool {
	if want.IsError != got.IsError || len(want.Content) != len(got.Content) {
		return false
	}
	if canonical(want.Structured) != canonical(got.Structured) {
		return false
	}
	for i := range want.Content {
		a, b := want.Content[i], got.Content[i]
		a.Meta, b.Meta, a.Annotations, b.Annotations = nil, nil, nil, nil
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			return false
		}
	}
	return true
}
